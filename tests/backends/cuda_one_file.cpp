// The CUDA backend compiled in one file by the host compiler alone
// (ROSTER_SOURCE: roster's code and the backend's -inl code here): no roster
// library, no nvcc, no CUDA header and no CUDA library on the link line, only
// -pthread -ldl. It registers "cuda" and either opens cuda:0 and runs a
// checked dot from the committed fat image (a GPU node), or says why it
// cannot, with a Fix (no driver, no device). "unknown type" fails.
#define ROSTER_SOURCE
#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>

#include <cstdio>
#include <string>
#include <vector>

#if defined(CUDA_VERSION) || defined(__CUDA_RUNTIME_H__) || defined(__cuda_cuda_h__)
#  error "a CUDA header reached the one-file build"
#endif

int main() {
  auto dev = roster::acquire("cuda:0");
  if (!dev) {
    const std::string m = dev.error().message();
    std::printf("cuda:0 did not open: %s\n", m.c_str());
    const bool said_why = dev.error().code() == roster::errc::unavailable && m.rfind("cuda: ", 0) == 0 &&
                          m.find("\nFix: ") != std::string::npos;
    return said_why ? 0 : 1;
  }
  const std::size_t n = 1000003;
  auto a = (*dev)->allocate<double>(n), b = (*dev)->allocate<double>(n), r = (*dev)->allocate<double>(1);
  if (!a || !b || !r) return std::printf("allocation failed\n"), 1;
  roster::program p;
  p.fill(*a, 2.0).fill(*b, 0.5).grid_sync().dot(*r, *a, *b);
  if (auto ok = (*dev)->dispatch(p); !ok) return std::printf("%s\n", ok.error().message().c_str()), 1;
  std::vector<double> h(1);
  if (auto ok = (*dev)->download(*r, std::span<double>(h)); !ok) return std::printf("%s\n", ok.error().message().c_str()), 1;
  std::printf("cuda:0 %s: dot %.1f (want %.1f)\n", (*dev)->adapter().name.c_str(), h[0], static_cast<double>(n));
  return h[0] == static_cast<double>(n) ? 0 : 1;
}
