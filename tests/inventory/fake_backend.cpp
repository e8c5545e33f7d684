// A backend in a static archive that nothing references: the linker drops
// this member unless the program links it whole or uses its anchor.
#include <roster/backend.hpp>

namespace {
struct fake_backend {
  static constexpr std::string_view id = "fake";
  static constexpr int rank = 50;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  // Never opened: the abstract device type is enough for the contract.
  struct device_type : roster::device {};
  static roster::expected<std::unique_ptr<device_type>> open(roster::open_key, std::uint32_t) {
    return roster::make_error(roster::errc::unavailable, "fake: this test backend has no device",
                              "nothing to fix; the tests expect this error");
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    return std::vector<roster::adapter_info>{};
  }
};
}  // namespace

ROSTER_REGISTER_BACKEND(fake_backend);
ROSTER_DEFINE_BACKEND_ANCHOR(fake);
