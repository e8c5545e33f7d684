// Must not compile: the backend's device_type is not final, so calls stay virtual.
#include "fake_backend.hpp"
class open_device : public roster::device {};
struct open_backend {
  static constexpr std::string_view id = "open";
  static constexpr int rank = 1;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = open_device;
  static roster::expected<std::unique_ptr<open_device>> open(roster::open_key, std::uint32_t);
  static roster::expected<std::vector<roster::adapter_info>> enumerate();
};
using registry = roster::static_registry<open_backend>;
static_assert(registry::size == 1);
int main() { return 0; }
