#pragma once
// Shared by the fuzz targets: a check that stops the run with a message, so
// libFuzzer (or the replay test in tests/reliability) reports the input.

#include <roster/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#define ROSTER_FUZZ_CHECK(cond, ...)                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   #cond);                                                        \
      std::fprintf(stderr, "  " __VA_ARGS__);                                     \
      std::fprintf(stderr, "\n");                                                 \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

namespace roster_fuzz {
// Checks that an error a user can meet ends with its Fix: part.
inline void check_fix(const roster::error& e) {
  ROSTER_FUZZ_CHECK(e.message().find("\nFix: ") != std::string::npos && !e.fix().empty(),
                    "error without a Fix: part: %s", e.message().c_str());
}
}  // namespace roster_fuzz
