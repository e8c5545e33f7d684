// Must not compile: a backend whose enumerate() is missing. Built by the
// concept test, which expects the static_assert of ROSTER_REGISTER_BACKEND.
// With -DROSTER_TEST_FIXED_BACKEND the same file compiles, proving that the
// failure comes from the concept and not from anything else here.
#include <roster/backend.hpp>

#include <memory>

namespace {
class test_device;
struct broken_backend {
  static constexpr std::string_view id = "test_registry_backend_broken";
  static constexpr int rank = 7;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = roster::device;
  static roster::expected<std::unique_ptr<roster::device>> open(roster::open_key, std::uint32_t) {
    return roster::make_error(roster::errc::unavailable, "no", "none");
  }
#if defined(ROSTER_TEST_FIXED_BACKEND)
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return std::vector<roster::adapter_info>{}; }
#endif
};
}  // namespace

ROSTER_REGISTER_BACKEND(broken_backend);
