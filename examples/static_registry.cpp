// A compile-time registry of two backends, as docs/static-registry.md shows
// it: checked, sorted by rank, searched by id and dispatched without a
// virtual call. Needs Boost.Hana.
#include <roster/backends/cpu.hpp>

#include <cstdio>
#include <string>

namespace my {
// Stands in for a GPU backend of your own (docs/writing-a-backend.md builds a
// real one); here it opens the host CPU under another id and a lower rank.
struct gpu_backend {
  static constexpr std::string_view id = "mygpu";
  static constexpr int rank = 50;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = roster::cpu::device;
  static roster::expected<std::unique_ptr<device_type>> open(roster::open_key key, std::uint32_t n) {
    return roster::cpu::backend::open(key, n);
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return roster::cpu::backend::enumerate(); }
};
}  // namespace my

#include <roster/backends/cpu.hpp>
#include <roster/static_registry.hpp>

using backends = roster::static_registry<my::gpu_backend, roster::cpu::backend>;

static_assert(backends::ids()[0] == "mygpu");          // sorted by (rank, id)
using cpu = decltype(backends::get<"cpu">())::type;     // found at compile time
static_assert(backends::contains(BOOST_HANA_STRING("cpu")));

int run() {
  auto dev = backends::open<"cpu">();                   // expected<unique_ptr<cpu::device>>
  if (!dev) { std::puts(dev.error().message().c_str()); return 1; }
  auto a = (*dev)->allocate<double>(1 << 20);
  if (!a) return 1;
  roster::program p;
  p.fill(*a, 1.0);
  if (auto ok = roster::dispatch_static(**dev, p); !ok) return 1;  // no virtual call
  backends::for_each([](auto t) {                       // rank order
    using B = typename decltype(t)::type;
    std::printf("%s rank %d\n", std::string(B::id).c_str(), B::rank);
  });
  return 0;
}

int main() { return run(); }
