#pragma once
// What this process holds, in bytes, for the tests that bound its growth:
// under a sanitizer the bytes its allocator has handed out and not taken back
// (ASan keeps freed blocks in a quarantine, so the resident set grows
// whatever the code does); otherwise the resident set (/proc/self/statm).

#include <cstddef>
#include <cstdio>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizers' allocator interface (GCC ships no header for it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace roster_test {

inline std::size_t held_bytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#else
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<std::size_t>(resident) * 4096u;
#endif
}

}  // namespace roster_test
