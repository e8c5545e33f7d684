// A shared library built header-only (no libroster): test_header_only links
// two copies of it, compiled with a different HEADER_ONLY_LIB name.
#include <roster/inventory.hpp>

#include "entries.hpp"

namespace {
constexpr inv_test::header_only_item entry{{"lib-" HEADER_ONLY_LIB, 1}};
}  // namespace
ROSTER_SUBMIT(inv_test::header_only_item, entry);

/// Returns this library's view of the process-wide hub.
extern "C" __attribute__((visibility("default"))) const void* ROSTER_IMPL_CAT(header_only_hub_, HEADER_ONLY_SYM)() {
  return &roster::detail::the_hub();
}

/// Returns how many entries this library sees.
extern "C" __attribute__((visibility("default"))) std::size_t ROSTER_IMPL_CAT(header_only_count_, HEADER_ONLY_SYM)() {
  return roster::inventory<inv_test::header_only_item>().size();
}
