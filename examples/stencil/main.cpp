// A 2-D 5-point Jacobi step as a user kernel: a CPU variant here, a Vulkan
// one from jacobi.comp, an OpenCL one from jacobi_opencl.hpp, two CUDA ones
// (plain, tiled) from jacobi.cu, all
// registered in roster's kernel inventory. The program alternates two grids
// for a number of steps, then sums the squares of the result with roster's
// built-in dot; both are checked against a CPU reference.
//
// usage: stencil [SPEC [VARIANT [NX [NY [STEPS]]]]]   e.g. stencil cuda:0 tiled 4096 4096 100
//        stencil SPEC tune [NX [NY]]   times every variant on SPEC, checked, and records the winner
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include "jacobi.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(STENCIL_VULKAN)
#  include <roster/backends/vulkan.hpp>

#  include "jacobi.spv.h"
#endif
#if defined(STENCIL_OPENCL)
#  include <roster/backends/opencl.hpp>

#  include "jacobi_opencl.hpp"
#endif

// The CPU variant: each pool thread runs its share of the points.
template <class T>
void jacobi_cpu(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* out = a.data<T>(0);
  const T* in = a.data<const T>(1);
  const auto nx = a.scalar<std::uint32_t>(0), ny = a.scalar<std::uint32_t>(1);
  for (std::size_t k = begin; k < end; ++k) out[k] = stencil::jacobi_point(in, k, nx, ny);
}
ROSTER_CPU_KERNEL("jacobi", "plain", roster::default_variant, jacobi_cpu, roster::write<roster::elem>,
                  roster::read<roster::elem>, roster::scalar<std::uint32_t>, roster::scalar<std::uint32_t>);

// A typed handle: calls through it are checked for arity and kinds as they compile.
constexpr roster::kernel_ref<roster::write<double>, roster::read<double>, roster::scalar<std::uint32_t>,
                             roster::scalar<std::uint32_t>>
    jacobi{"jacobi"};

#if defined(STENCIL_VULKAN)
// The Vulkan variant: the SPIR-V the build made from jacobi.comp.
constinit const roster::vulkan::shader jacobi_spv{roster_spv_jacobi, 64};
constinit const roster::kernel_entry jacobi_vulkan =
    roster::vulkan::kernel<roster::write<double>, roster::read<double>, roster::scalar<std::uint32_t>,
                           roster::scalar<std::uint32_t>>("jacobi", "plain", roster::default_variant, &jacobi_spv);
ROSTER_KERNEL(jacobi_vulkan);
#endif

#if defined(STENCIL_OPENCL)
// The OpenCL variant: OpenCL C the device builds at the first call.
constinit const roster::opencl::source jacobi_cl{stencil::jacobi_opencl, "jacobi", 64};
constinit const roster::kernel_entry jacobi_opencl =
    roster::opencl::kernel<roster::write<double>, roster::read<double>, roster::scalar<std::uint32_t>,
                           roster::scalar<std::uint32_t>>("jacobi", "plain", roster::default_variant, &jacobi_cl);
ROSTER_KERNEL(jacobi_opencl);
#endif

// Times every variant of "jacobi" on a device, each checked against the CPU
// reference, and records the winner for this grid's size class: later calls
// that name no variant run it on this device (docs/kernels.md, "Tuning").
int tune(roster::device& dev, std::uint32_t nx, std::uint32_t ny) {
  roster::tune_options options;
  options.scalars = {roster::scalar_arg(nx), roster::scalar_arg(ny)};
  options.reference = &jacobi_cpu<double>;
  auto t = roster::tune_kernel(dev, "jacobi", roster::element_type::f64, std::size_t{nx} * ny, options);
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().message().c_str());
    return 1;
  }
  for (const auto& v : t->variants)
    std::printf("stencil tune: %s '%s': %s\n", dev.adapter().spec().c_str(), v.variant.c_str(),
                v.wrong ? v.wrong->message().c_str() : (std::to_string(v.median_ns / 1e3) + " us").c_str());
  auto path = roster::tuning_path();
  if (!path) {
    std::fprintf(stderr, "%s\n", path.error().message().c_str());
    return 1;
  }
  if (auto ok = roster::record_kernel_choices(dev.adapter(), std::span(&t->choice, 1), *path); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }
  std::printf("stencil tune: variant '%s' recorded for size class 2^%u in %s\n", t->choice.variant.c_str(),
              t->choice.size_class, path->c_str());
  return t->refused().empty() ? 0 : 1;
}

int main(int argc, char** argv) {
  const std::string spec = argc > 1 ? argv[1] : "cpu";
  const std::string variant = argc > 2 && std::string(argv[2]) != "default" ? argv[2] : "";
  const std::uint32_t nx = argc > 3 ? std::atoi(argv[3]) : 256, ny = argc > 4 ? std::atoi(argv[4]) : 192;
  const int steps = argc > 5 ? std::atoi(argv[5]) : 20;
  const std::size_t n = std::size_t{nx} * ny;

  auto dev = roster::acquire(spec);
  if (!dev) {
    std::fprintf(stderr, "%s\n", dev.error().message().c_str());
    return 77;  // no such device here: a skip
  }
  if (variant == "tune") return tune(**dev, argc > 3 ? nx : 1024, argc > 4 ? ny : 1024);
  auto a = (*dev)->allocate<double>(n), b = (*dev)->allocate<double>(n), r = (*dev)->allocate<double>(1);
  if (!a || !b || !r) {
    std::fprintf(stderr, "%s\n", (!a ? a : !b ? b : r).error().message().c_str());
    return 1;
  }
  std::vector<double> grid(n);
  for (std::size_t k = 0; k < n; ++k) grid[k] = static_cast<double>((k * 7919) % 101) / 101.0;
  if (auto ok = (*dev)->upload(*a, std::span<const double>(grid)); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }

  // Steps from a to b and back, then the sum of squares with a built-in op.
  roster::program p;
  for (int s = 0; s < steps; ++s) {
    const roster::buffer& from = s % 2 == 0 ? *a : *b;
    const roster::buffer& to = s % 2 == 0 ? *b : *a;
    roster::call(p, jacobi.with({.variant = variant}), to, from, nx, ny);
  }
  const roster::buffer& result = steps % 2 == 0 ? *a : *b;
  p.dot(*r, result, result);

  const auto t0 = std::chrono::steady_clock::now();
  if (auto ok = (*dev)->dispatch(p); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }
  if (auto ok = (*dev)->synchronize(); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<double> got(n), sum(1);
  if (!(*dev)->download(result, std::span<double>(got)) || !(*dev)->download(*r, std::span<double>(sum))) return 1;

  // The reference: the same steps on the host.
  std::vector<double> ref = grid, next(n);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t k = 0; k < n; ++k) next[k] = stencil::jacobi_point(ref.data(), k, nx, ny);
    ref.swap(next);
  }
  double worst = 0.0, squares = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    worst = std::max(worst, std::fabs(got[k] - ref[k]));
    squares += ref[k] * ref[k];
  }
  const bool ok = worst <= 1e-12 && std::fabs(sum[0] - squares) <= 1e-9 * squares;
  const double gbps = 2.0 * sizeof(double) * static_cast<double>(n) * steps / seconds / 1e9;
  std::printf("stencil: %s variant '%s', %ux%u, %d steps: max |error| %.3g, sum of squares %.12g (reference "
              "%.12g), %.2f GB/s (first dispatch, with pipeline creation) -> %s\n",
              (*dev)->adapter().spec().c_str(), variant.empty() ? "default" : variant.c_str(), nx, ny, steps, worst,
              sum[0], squares, gbps, ok ? "ok" : "WRONG");
  // A result that did not reach its file (a full disk, a closed pipe) is a failure.
  if (std::fflush(stdout) != 0) return std::perror("stencil: standard output"), 1;
  return ok ? 0 : 1;
}
