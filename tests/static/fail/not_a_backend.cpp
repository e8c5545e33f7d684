// Must not compile: a listed type has no open() or enumerate().
#include "fake_backend.hpp"
struct half_backend {
  static constexpr std::string_view id = "half";
  static constexpr int rank = 1;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = roster_test::fake_device;
};
using registry = roster::static_registry<roster_test::fake_backend<"ok", 1>, half_backend>;
static_assert(registry::size == 2);
int main() { return 0; }
