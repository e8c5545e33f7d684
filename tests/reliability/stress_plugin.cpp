// The backend plugin the stress test opens and closes in a loop: one backend,
// registered with ROSTER_REGISTER_BACKEND, whose device does nothing.
#include <roster/roster.hpp>

#include "../support/identity_device.hpp"

#include <memory>
#include <vector>

namespace {

// The plugin's one adapter; its device only reports it.
roster::adapter_info idle_adapter() {
  roster::adapter_info info;
  info.backend = "test_registry_backend_plugin";
  info.name = "stress plugin";
  return info;
}

struct plugin_backend {
  static constexpr std::string_view id = "test_registry_backend_plugin";
  static constexpr int rank = 500;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = roster_test_support::identity_device;
  static roster::expected<std::unique_ptr<device_type>> open(roster::open_key, std::uint32_t ordinal) {
    if (ordinal != 0) return roster::make_error(roster::errc::not_found, "stress plugin: one adapter", "use ordinal 0");
    return std::make_unique<device_type>(idle_adapter());
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    return std::vector<roster::adapter_info>{idle_adapter()};
  }
};

}  // namespace

ROSTER_REGISTER_BACKEND(plugin_backend);
