// Registers a backend whose id comes from the command line (BAD_ID): ids a
// device spec cannot name must not compile.
#include "toy_device.hpp"

namespace {
struct named_backend {
  static constexpr std::string_view id = BAD_ID;
  static constexpr int rank = 100;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = toy::device::ops();
  using device_type = toy::device;
  static roster::expected<std::unique_ptr<toy::device>> open(roster::open_key, std::uint32_t n) { return toy::open(id, n); }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return toy::enumerate(id); }
};
}  // namespace

ROSTER_REGISTER_BACKEND(named_backend);
