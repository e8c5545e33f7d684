// Fuzzes the plugin recogniser (include/roster/detail/backend/plugin_check.hpp):
// any bytes, as a file, are either a roster plugin of this plugin ABI or an
// error with a Fix:, found with bounded reads and without fault.
#include <roster/detail/backend/plugin_check.hpp>

#include "check.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("roster-fuzz-plugin", MFD_CLOEXEC);
  ROSTER_FUZZ_CHECK(fd >= 0, "memfd_create failed");
  ROSTER_FUZZ_CHECK(::ftruncate(fd, 0) == 0, "ftruncate failed");
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    ROSTER_FUZZ_CHECK(n > 0, "pwrite failed");
    done += static_cast<std::size_t>(n);
  }
  auto r = roster::detail::check_plugin_fd(fd, size, "fuzz.so");
  if (r) ROSTER_FUZZ_CHECK(*r == roster::detail::plugin_abi_version, "accepted ABI %u", *r);
  else roster_fuzz::check_fix(r.error());
  // The same through the path, as load_plugin reads it: the same verdict.
  auto again = roster::detail::check_plugin_file("/proc/self/fd/" + std::to_string(fd));
  ROSTER_FUZZ_CHECK(again.has_value() == r.has_value(), "the path and the descriptor disagree");
  return 0;
}
