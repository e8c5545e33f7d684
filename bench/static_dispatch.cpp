// Dispatch cost of a tiny program (fill of 16 doubles) on the CPU backend,
// reached three ways, all in this binary:
//   direct:    the backend's own device, opened by hand (cpu::backend::open),
//              run with device::dispatch — the baseline;
//   static:    the backend found at compile time in a static_registry, run
//              with roster::dispatch_static on its final device type;
//   inventory: the backend found in the link-time inventory (roster::acquire)
//              and run through a roster::device& (virtual calls).
// Also the floor: dispatch_steps on the concrete device, with no checks.
// And a user kernel (y += a x over doubles) reached three ways, paired the
// same way: its function called directly on the device's memory (the
// baseline), a static kernel call (roster::static_kernels), and a program's
// call step through the kernel inventory; at 16 elements and at 2^16.
// Run with ROSTER_CPU_THREADS=1 (the benchmark() sets it) so the pool does
// not add thread wake-ups to a 16-element program.

#include <roster/acquire.hpp>
#include <roster/backends/cpu.hpp>
#include <roster/static_kernels.hpp>
#include <roster/static_registry.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using registry = roster::static_registry<roster::cpu::backend>;
constexpr std::size_t elements = 16;

template <class D>
roster::program fill_program(D& dev, roster::buffer& out) {
  auto a = dev.template allocate<double>(elements);
  if (!a) std::abort();
  out = *a;
  roster::program p;
  p.fill(*a, 3.0);
  return p;
}

void report_failure(benchmark::State& state, const roster::error& e) { state.SkipWithError(e.message().c_str()); }

void BM_direct(benchmark::State& state) {
  auto d = roster::open_as<roster::cpu::backend>();
  if (!d) return report_failure(state, d.error());
  roster::cpu::device& dev = **d;
  roster::buffer a;
  const auto p = fill_program(dev, a);
  for (auto _ : state) {
    auto ok = dev.dispatch(p);
    benchmark::DoNotOptimize(ok);
  }
}

void BM_static(benchmark::State& state) {
  auto d = registry::open<"cpu">();
  if (!d) return report_failure(state, d.error());
  auto& dev = **d;  // roster::cpu::device&, known to the compiler
  roster::buffer a;
  const auto p = fill_program(dev, a);
  for (auto _ : state) {
    auto ok = roster::dispatch_static(dev, p);
    benchmark::DoNotOptimize(ok);
  }
}

void BM_inventory_virtual(benchmark::State& state) {
  auto d = roster::acquire("cpu");
  if (!d) return report_failure(state, d.error());
  roster::device& dev = **d;  // only roster::device is known
  benchmark::DoNotOptimize(&dev);
  roster::buffer a;
  const auto p = fill_program(dev, a);
  for (auto _ : state) {
    auto ok = dev.dispatch(p);
    benchmark::DoNotOptimize(ok);
  }
}

void BM_floor_unchecked(benchmark::State& state) {
  auto d = roster::open_as<roster::cpu::backend>();
  if (!d) return report_failure(state, d.error());
  roster::cpu::device& dev = **d;
  roster::buffer a;
  const auto p = fill_program(dev, a);
  for (auto _ : state) {
    auto ok = dev.dispatch_steps(p.steps());
    benchmark::DoNotOptimize(ok);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

// Runs one batch of each way per benchmark iteration, rotating the order,
// and returns each way's per-round times and the per-round ratios of each way
// to way 0 (the direct call).
template <int Ways, class Time>
struct paired_rounds {
  std::vector<double> t[Ways];
  std::vector<double> ratio[Ways];
  paired_rounds(benchmark::State& state, Time& time) {
    int round = 0;
    for (auto _ : state) {
      double ns[Ways];
      for (int k = 0; k < Ways; ++k) {
        const int way = (round + k) % Ways;
        ns[way] = time(way);
      }
      ++round;
      for (int w = 0; w < Ways; ++w) {
        t[w].push_back(ns[w]);
        ratio[w].push_back(ns[w] / ns[0]);
      }
    }
  }
};

// Paired: each iteration runs one batch of each way, in rotating order, so
// drift in the machine (frequency, neighbours) hits all ways alike; the
// counters are the medians of the per-round ratios to the direct batch.
void BM_paired(benchmark::State& state) {
  constexpr int batch = 64;
  auto direct = roster::open_as<roster::cpu::backend>();
  auto stat = registry::open<"cpu">();
  auto inv = roster::acquire("cpu");
  auto bare = roster::open_as<roster::cpu::backend>();
  if (!bare) return report_failure(state, bare.error());
  if (!direct) return report_failure(state, direct.error());
  if (!stat) return report_failure(state, stat.error());
  if (!inv) return report_failure(state, inv.error());
  roster::cpu::device& dd = **direct;
  auto& sd = **stat;
  roster::device& vd = **inv;
  benchmark::DoNotOptimize(&vd);
  roster::cpu::device& fd = **bare;
  roster::buffer a, b, c, f;
  const auto pd = fill_program(dd, a), ps = fill_program(sd, b), pv = fill_program(vd, c), pf = fill_program(fd, f);
  auto time = [&](int way) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) {
      if (way == 0) {
        auto ok = dd.dispatch(pd);
        benchmark::DoNotOptimize(ok);
      } else if (way == 1) {
        auto ok = roster::dispatch_static(sd, ps);
        benchmark::DoNotOptimize(ok);
      } else if (way == 2) {
        auto ok = vd.dispatch(pv);
        benchmark::DoNotOptimize(ok);
      } else {
        auto ok = fd.dispatch_steps(pf.steps());
        benchmark::DoNotOptimize(ok);
      }
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / batch;
  };
  const paired_rounds<4, decltype(time)> r(state, time);
  state.counters["direct_ns"] = median(r.t[0]);
  state.counters["static_ns"] = median(r.t[1]);
  state.counters["inventory_ns"] = median(r.t[2]);
  state.counters["floor_ns"] = median(r.t[3]);
  state.counters["static_vs_direct_pct"] = (median(r.ratio[1]) - 1) * 100;
  state.counters["inventory_vs_direct_pct"] = (median(r.ratio[2]) - 1) * 100;
  state.counters["floor_vs_direct_pct"] = (median(r.ratio[3]) - 1) * 100;
}

template <class T>
void bench_axpy(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  const T alpha = a.scalar<T>(0);
  for (std::size_t i = begin; i < end; ++i) y[i] += alpha * x[i];
}
using axpy_kernel = roster::static_kernel<"bench_axpy", "cpu", "plain", roster::default_variant, &bench_axpy<double>,
                                          roster::read_write<double>, roster::read<double>, roster::scalar<double>>;
using kernels = roster::static_kernels<registry, axpy_kernel>;

// Paired as BM_paired: per round one batch of each way, rotating the order;
// the counters are medians of per-round figures. The kernel adds a tiny
// fraction to y each call, so the values stay finite.
void BM_kernel_paired(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int batch = n <= 1024 ? 64 : 4;
  auto opened = registry::open<"cpu">();
  if (!opened) return report_failure(state, opened.error());
  roster::cpu::device& dev = **opened;
  auto y = roster::allocate_typed<double>(dev, n), x = roster::allocate_typed<double>(dev, n);
  if (!y || !x) return state.SkipWithError("allocation failed");
  roster::program init;
  init.fill(*y, 1.0).fill(*x, 1.0);
  if (!dev.dispatch(init)) return state.SkipWithError("fill failed");
  roster::program p;
  p.call("bench_axpy", {*y, *x}, {1e-9});
  // The baseline: the same function on the same memory, called directly.
  const roster::kernel_buffer bufs[2] = {{const_cast<void*>(dev.address(*y)), n, roster::element_type::f64},
                                         {const_cast<void*>(dev.address(*x)), n, roster::element_type::f64}};
  const roster::scalar_arg alpha(1e-9);
  const roster::kernel_args args{bufs, {&alpha, 1}, n};
  // Called through a pointer the compiler cannot see through, so the baseline
  // runs the same machine code as the other ways (inlined into this loop it
  // compiles differently, faster or slower by tens of percent).
  roster::host_kernel_fn direct = &bench_axpy<double>;
  benchmark::DoNotOptimize(direct);
  bool failed = false;
  auto time = [&](int way) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) {
      if (way == 0) {
        direct(args, 0, n);
        benchmark::ClobberMemory();
      } else if (way == 1) {
        failed |= !kernels::call<"bench_axpy">(dev, *y, *x, 1e-9);
      } else {
        failed |= !dev.dispatch(p);
      }
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / batch;
  };
  const paired_rounds<3, decltype(time)> r(state, time);
  if (failed) return state.SkipWithError("a kernel call failed");
  state.counters["direct_ns"] = median(r.t[0]);
  state.counters["static_ns"] = median(r.t[1]);
  state.counters["program_ns"] = median(r.t[2]);
  state.counters["static_vs_direct_pct"] = (median(r.ratio[1]) - 1) * 100;
  state.counters["program_vs_direct_pct"] = (median(r.ratio[2]) - 1) * 100;
}

}  // namespace

// The kernel in the link-time inventory too, for the program's call step.
ROSTER_REGISTER_STATIC_KERNEL(axpy_kernel);

BENCHMARK(BM_kernel_paired)->Arg(16)->Iterations(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_kernel_paired)->Arg(1 << 16)->Iterations(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_paired)->Iterations(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_direct);
BENCHMARK(BM_static);
BENCHMARK(BM_inventory_virtual);
BENCHMARK(BM_floor_unchecked);

int main(int argc, char** argv) {
  setenv("ROSTER_CPU_THREADS", "1", 0);  // keep a value the caller set
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
