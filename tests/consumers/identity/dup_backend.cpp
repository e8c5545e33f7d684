// A backend whose id and rank come from the command line, so one file built
// twice gives two libraries with one registration site (as -ffile-prefix-map
// gives two files in a reproducible build).
#include "toy_device.hpp"

#ifndef DUP_ID
#  define DUP_ID "dup"
#endif
#ifndef DUP_RANK
#  define DUP_RANK 100
#endif

namespace {
struct dup_backend {
  static constexpr std::string_view id = DUP_ID;
  static constexpr int rank = DUP_RANK;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = toy::device::ops();
  using device_type = toy::device;
  static roster::expected<std::unique_ptr<toy::device>> open(roster::open_key, std::uint32_t n) { return toy::open(id, n); }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return toy::enumerate(id); }
};
}  // namespace

ROSTER_REGISTER_BACKEND(dup_backend);
