// A file of the program like any other: roster's headers, as in library mode.
#include "stream.hpp"

#include <vector>

int run_triad(roster::device& dev, std::size_t n) {
  auto a = dev.allocate<double>(n), b = dev.allocate<double>(n), c = dev.allocate<double>(n);
  if (!a || !b || !c) return 1;
  roster::program p;
  p.fill(*b, 2.0).fill(*c, 4.0).grid_sync();
  p.triad(*a, *b, *c, 0.5);  // a = 2 + 0.5 * 4 = 4
  if (!dev.dispatch(p) || !dev.synchronize()) return 1;
  std::vector<double> host(n);
  if (!dev.download<double>(*a, host)) return 1;
  for (double x : host)
    if (x != 4.0) return 1;
  return 0;
}
