// A plugin whose start-up code calls roster while roster is loading it from
// ROSTER_PLUGIN_PATH: it must neither deadlock nor recurse into the load.
#include <roster/roster.hpp>

#include "toy_device.hpp"

namespace {
struct toy_reentrant_backend {
  static constexpr std::string_view id = "toy-reentrant";
  static constexpr int rank = 500;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = toy::device::ops();
  using device_type = toy::device;
  static roster::expected<std::unique_ptr<toy::device>> open(roster::open_key, std::uint32_t n) { return toy::open(id, n); }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return toy::enumerate(id); }
};
int seen_backends = -1;
int seen_plugins = -1;
}  // namespace

ROSTER_REGISTER_BACKEND(toy_reentrant_backend);

[[gnu::constructor]] static void call_roster_at_start() {
  seen_backends = static_cast<int>(roster::registered_backends().size());
  seen_plugins = static_cast<int>(roster::loaded_plugins().size());
}

/// Returns what the start-up code saw: backends * 1000 + plugins, or -1 if it did not run.
extern "C" __attribute__((visibility("default"))) int roster_test_reentrant_seen() {
  return seen_backends < 0 ? -1 : seen_backends * 1000 + seen_plugins;
}
