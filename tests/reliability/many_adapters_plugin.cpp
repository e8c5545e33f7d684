// A registry test backend plugin that reports 100,000 adapters (hostile case
// 65): each a virtual GPU with a UUID of its own, none of which opens.
#include <roster/roster.hpp>

#include "../support/identity_device.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t reported = 100'000;

struct many_adapters_backend {
  static constexpr std::string_view id = "test_registry_backend_many_adapters";
  static constexpr int rank = 500;
  static constexpr bool dispatches = false;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = roster_test_support::identity_device;
  static roster::expected<std::unique_ptr<device_type>> open(roster::open_key, std::uint32_t) {
    return roster::make_error(roster::errc::unavailable, "many adapters: none opens", "list them only");
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    std::vector<roster::adapter_info> out(reported);
    for (std::uint32_t i = 0; i < reported; ++i) {
      auto& a = out[i];
      a.backend = std::string(id);
      a.ordinal = i;
      a.name = "many";
      a.type = roster::device_type::virtual_gpu;
      a.uuid[0] = 0x5a;
      a.uuid[12] = static_cast<std::uint8_t>(i >> 24);
      a.uuid[13] = static_cast<std::uint8_t>(i >> 16);
      a.uuid[14] = static_cast<std::uint8_t>(i >> 8);
      a.uuid[15] = static_cast<std::uint8_t>(i);
    }
    return out;
  }
};

}  // namespace

ROSTER_REGISTER_BACKEND(many_adapters_backend);
