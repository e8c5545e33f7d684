// Acquires the consumer's own backend and the CPU backend, runs a triad on each.
#include <roster/roster.hpp>

#include <cstdio>
#include <vector>

static bool triad_on(const char* spec) {
  auto dev = roster::acquire(spec);
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), false;
  const std::size_t n = 1000;
  auto a = (*dev)->allocate<double>(n), b = (*dev)->allocate<double>(n), c = (*dev)->allocate<double>(n);
  if (!a || !b || !c) return false;
  roster::program p;
  p.fill(*b, 1.0).fill(*c, 2.0).grid_sync().triad(*a, *b, *c, 3.0);  // a = 1 + 3 * 2
  if (!(*dev)->dispatch(p) || !(*dev)->synchronize()) return false;
  std::vector<double> host(n);
  if (!(*dev)->download<double>(*a, host)) return false;
  std::printf("%s: %s, a[0] = %g\n", spec, (*dev)->adapter().name.c_str(), host[0]);
  return host[0] == 7.0 && host[n - 1] == 7.0;
}

int main() {
  for (const auto& b : roster::registered_backends()) std::printf("backend %s\n", std::string(b.id()).c_str());
  return triad_on("toy") && triad_on("cpu") ? 0 : 1;
}
