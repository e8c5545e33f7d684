// Runs triad on vulkan:0 and checks it, for vulkan_full_cache.sh (Mesa's
// shader cache on a full disk): prints "triad right" and exits 0 when every
// element is right.
#include <roster/roster.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto dev = roster::acquire("vulkan:0");
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 2;
  const std::size_t n = 1 << 16;
  auto a = (*dev)->allocate<float>(n), b = (*dev)->allocate<float>(n), c = (*dev)->allocate<float>(n);
  if (!a || !b || !c) return 2;
  roster::program p;
  p.fill(*b, 2.0).fill(*c, 4.0).grid_sync();
  p.triad(*a, *b, *c, 0.5);  // a = 2 + 0.5 * 4 = 4
  if (auto ok = (*dev)->dispatch(p); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), 2;
  if (!(*dev)->synchronize()) return 2;
  std::vector<float> host(n);
  if (!(*dev)->download<float>(*a, host)) return 2;
  for (float x : host)
    if (x != 4.0f) return std::puts("triad WRONG"), 1;
  std::puts("triad right");
  return 0;
}
