// Runs the STREAM kernels on the CPU backend, header-only, and checks every result.
#include <roster/backends/cpu.hpp>  // registers the CPU backend
#include <roster/roster.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto dev = roster::acquire("cpu");
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
  const std::size_t n = 5000;
  auto a = (*dev)->allocate<double>(n), b = (*dev)->allocate<double>(n);
  auto c = (*dev)->allocate<double>(n), r = (*dev)->allocate<double>(n);
  if (!a || !b || !c || !r) return 1;
  roster::program p;
  p.fill(*a, 1.0).fill(*b, 2.0).fill(*c, 0.0).grid_sync();
  p.copy(*c, *a).grid_sync();              // c = 1
  p.mul(*b, *c, 3.0).grid_sync();          // b = 3
  p.add(*c, *a, *b).grid_sync();           // c = 4
  p.triad(*a, *b, *c, 0.5).grid_sync();    // a = 3 + 0.5 * 4 = 5
  p.nstream(*a, *b, *c, 2.0).grid_sync();  // a = 5 + 3 + 2 * 4 = 16
  p.dot(*r, *a, *b);                       // r[0] = 16 * 3 * n
  if (auto ok = (*dev)->dispatch(p); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), 1;
  if (!(*dev)->synchronize()) return 1;
  std::vector<double> ha(n), hr(n);
  if (!(*dev)->download<double>(*a, ha) || !(*dev)->download<double>(*r, hr)) return 1;
  std::printf("%s: a[0] = %g, dot = %g\n", (*dev)->adapter().spec().c_str(), ha[0], hr[0]);
  return ha[0] == 16.0 && ha[n - 1] == 16.0 && hr[0] == 48.0 * n ? 0 : 1;
}
