// A backend plugin: a shared object that registers backend "toy-plugin" while
// it is loaded. Built with -fno-gnu-unique so that dlclose can unload it.
#include "toy_device.hpp"

namespace {
struct toy_plugin_backend {
  static constexpr std::string_view id = "toy-plugin";
  static constexpr int rank = 500;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = toy::device::ops();
  using device_type = toy::device;
  static roster::expected<std::unique_ptr<toy::device>> open(roster::open_key, std::uint32_t n) { return toy::open(id, n); }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return toy::enumerate(id); }
};
}  // namespace

ROSTER_REGISTER_BACKEND(toy_plugin_backend);
