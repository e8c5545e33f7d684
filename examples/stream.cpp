// Runs a small STREAM program on one device and checks the dot it computes.
// Usage: stream [SPEC]   (default: the device roster decides on; "cuda:1", "vulkan:0", ...)
#include <roster/roster.hpp>

#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

int main(int argc, char** argv) {
  // A spec names the device ("cuda:1", "vulkan:0"); without one, roster decides.
  auto dev = argc > 1 ? roster::get_device(argv[1]) : roster::default_device();
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;  // ends with "Fix: ..."

  const std::size_t n = 1 << 20;
  auto a = (*dev)->allocate<double>(n), b = (*dev)->allocate<double>(n),
       c = (*dev)->allocate<double>(n), r = (*dev)->allocate<double>(1);
  if (!a || !b || !c || !r) return 1;

  roster::program p;
  p.fill(*a, 0.1).fill(*b, 0.2).fill(*c, 0.0)   // one fused pass
   .grid_sync()
   .copy(*c, *a).mul(*b, *c, 0.4).add(*c, *a, *b).triad(*a, *b, *c, 0.4)
   .grid_sync()
   .dot(*r, *a, *b);                            // r[0] = sum a[i] * b[i]
  if (auto ok = (*dev)->dispatch(p); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), 1;

  std::vector<double> sum(1);
  if (!(*dev)->download(*r, std::span<double>(sum))) return 1;  // waits for the program
  const double want = 0.096 * 0.04 * n;                          // a = 0.096, b = 0.04 everywhere
  std::printf("%s (%s): dot = %.6f, expected %.6f\n", (*dev)->adapter().spec().c_str(),
              (*dev)->adapter().name.c_str(), sum[0], want);
  // A result that did not reach its file (a full disk, a closed pipe) is a failure.
  if (std::fflush(stdout) != 0) return std::perror("stream: standard output"), 1;
  return std::abs(sum[0] - want) <= 1e-6 * want ? 0 : 1;
}
