// The consumer's own backend, "toy", registered from a static library. Nothing
// references this file, so the library must be linked with link_whole.
#include "toy_device.hpp"

namespace {
struct toy_backend {
  static constexpr std::string_view id = "toy";
  static constexpr int rank = 500;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = toy::device::ops();
  using device_type = toy::device;
  static roster::expected<std::unique_ptr<toy::device>> open(roster::open_key, std::uint32_t n) { return toy::open(id, n); }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return toy::enumerate(id); }
};
}  // namespace

ROSTER_REGISTER_BACKEND(toy_backend);
