// The linker matrix program: entries from the executable, a whole archive
// and a shared library must all survive the compiler, linker and flags, and a
// conditional submission whose condition is false must be skipped.
#include <cstdio>
#include <string_view>

#include "matrix.hpp"

extern "C" int matrix_shlib_marker();

namespace {
constexpr matrix_item own{"main-1"};
}  // namespace
ROSTER_SUBMIT(matrix_item, own);

int main() {
  constexpr std::string_view expected[] = {"archive-1", "archive-2", "main-1", "shlib-1",
                                           "shlib-2",   "unit-1",    "unit-2", "unit-3"};
  auto span = roster::inventory<matrix_item>();
  bool ok = matrix_shlib_marker() == 1 && span.size() == std::size(expected);
  for (std::size_t i = 0; ok && i < span.size(); ++i) ok = span[i]->name == expected[i];
  if (!ok) {
    std::printf("expected %zu entries, got %zu:", std::size(expected), span.size());
    for (const auto* e : span) std::printf(" %.*s", static_cast<int>(e->name.size()), e->name.data());
    std::printf("\n");
    return 1;
  }
  return 0;
}
