// The CUDA backend's bandwidth and dispatch cost: 2^28 elements, each op a
// one-step roster program, GB/s from BabelStream's byte counts (copy, mul
// and dot move two arrays, add and triad three).
//
// - BM_stream_host_clock: timed the way BabelStream times (its src/main.cpp
//   and src/cuda/CUDAStream.cu at commit 57637d5): the ops run in its
//   classic order (copy, mul, add, triad, dot, then again), 100 times, each
//   run timed by the host clock around the launch and the wait for it
//   (BabelStream: high_resolution_clock around a kernel launch and
//   cudaStreamSynchronize; here steady_clock around dispatch() and
//   synchronize()), the first run dropped; counters give the fastest run
//   (BabelStream's headline) and the median. scripts/gpu-stream-compare sets
//   these beside BabelStream's own output, run one after the other.
// - BM_op: the median of 100 runs timed with CUDA events (the device's
//   clock, without the host's share), for the figures of the CUDA backend.
//
// The baselines run in the same binary: the two programs a fused one
// replaces, the split grid sync against the native one, and a bare
// cuLaunchKernel of the same kernel.

#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>

#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/module.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using roster::buffer;
using roster::program;
namespace rc = roster::cuda;

constexpr std::size_t stream_n = std::size_t{1} << 28;
constexpr int timed_runs = 100;

struct arrays {
  buffer a, b, c, r;
};

// The device and its arrays, opened once; null without a CUDA device.
struct bench_state {
  std::unique_ptr<rc::device> dev;
  arrays f32{}, f64{};
  std::string why;
};

bench_state& state_of() {
  static bench_state s = [] {
    bench_state st;
    auto d = roster::open_as<rc::backend>();
    if (!d) {
      st.why = d.error().message();
      return st;
    }
    st.dev = std::move(*d);
    auto make = [&](roster::element_type t, arrays& out) -> bool {
      for (buffer* b : {&out.a, &out.b, &out.c}) {
        auto x = st.dev->allocate(t, stream_n);
        if (!x) return st.why = x.error().message(), false;
        *b = *x;
      }
      auto r = st.dev->allocate(t, 1);
      if (!r) return st.why = r.error().message(), false;
      out.r = *r;
      // BabelStream's start values.
      auto ok = st.dev->dispatch(program().fill(out.a, 0.1).fill(out.b, 0.2).fill(out.c, 0.0).fill(out.r, 0.0));
      if (ok) ok = st.dev->synchronize();
      if (!ok) return st.why = ok.error().message(), false;
      return true;
    };
    if (!make(roster::element_type::f32, st.f32) || !make(roster::element_type::f64, st.f64)) st.dev.reset();
    return st;
  }();
  return s;
}

// Times `runs` dispatches of p with events (after warm-up) and reports the
// median as time and as GB/s over `bytes`.
void time_program(benchmark::State& state, rc::device& dev, const std::vector<program>& parts, double bytes) {
  for (int w = 0; w < 3; ++w)
    for (const auto& p : parts)
      if (auto ok = dev.dispatch(p); !ok) return state.SkipWithError(ok.error().message().c_str());
  if (auto ok = dev.synchronize(); !ok) return state.SkipWithError(ok.error().message().c_str());
  std::vector<double> seconds;
  seconds.reserve(timed_runs);
  for (auto _ : state) {
    double total = 0.0;
    for (const auto& p : parts) {
      auto t = dev.timed_dispatch(p);
      if (!t) return state.SkipWithError(t.error().message().c_str());
      total += static_cast<double>(t->count()) * 1e-9;
    }
    state.SetIterationTime(total);
    seconds.push_back(total);
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  state.counters["median_ms"] = median * 1e3;
  state.counters["GBps"] = bytes / median * 1e-9;
}

template <class T>
void BM_op(benchmark::State& state) {
  auto& st = state_of();
  if (!st.dev) return state.SkipWithError(("no CUDA device: " + st.why).c_str());
  const bool f64 = std::is_same_v<T, double>;
  const arrays& x = f64 ? st.f64 : st.f32;
  const int which = static_cast<int>(state.range(0));
  program p;
  switch (which) {
    case 0: p.copy(x.c, x.a); break;
    case 1: p.mul(x.b, x.c, 0.4); break;
    case 2: p.add(x.c, x.a, x.b); break;
    case 3: p.triad(x.a, x.b, x.c, 0.4); break;
    default: p.dot(x.r, x.a, x.b); break;
  }
  if (auto ok = st.dev->set_mode(rc::grid_sync_mode::native); !ok) (void)st.dev->set_mode(rc::grid_sync_mode::split);
  constexpr const char* names[] = {"copy", "mul", "add", "triad", "dot"};
  state.SetLabel(names[which]);
  time_program(state, *st.dev, {p}, static_cast<double>(roster::bytes_moved(p.steps()[0])));
}
BENCHMARK_TEMPLATE(BM_op, float)->DenseRange(0, 4)->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_op, double)->DenseRange(0, 4)->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMillisecond);

// The five ops in BabelStream's classic order, each run timed by the host
// clock around dispatch() and synchronize() (see the top of this file).
template <class T>
void BM_stream_host_clock(benchmark::State& state) {
  auto& st = state_of();
  if (!st.dev) return state.SkipWithError(("no CUDA device: " + st.why).c_str());
  const arrays& x = std::is_same_v<T, double> ? st.f64 : st.f32;
  if (auto ok = st.dev->set_mode(rc::grid_sync_mode::native); !ok) (void)st.dev->set_mode(rc::grid_sync_mode::split);
  constexpr const char* names[] = {"copy", "mul", "add", "triad", "dot"};
  program p[5];
  p[0].copy(x.c, x.a);
  p[1].mul(x.b, x.c, 0.4);
  p[2].add(x.c, x.a, x.b);
  p[3].triad(x.a, x.b, x.c, 0.4);
  p[4].dot(x.r, x.a, x.b);
  std::vector<double> seconds[5];
  using clock = std::chrono::steady_clock;
  for (auto _ : state) {
    double total = 0.0;
    for (int k = 0; k < 5; ++k) {
      const auto t0 = clock::now();
      auto ok = st.dev->dispatch(p[k]);
      if (ok) ok = st.dev->synchronize();
      const auto t1 = clock::now();
      if (!ok) return state.SkipWithError(ok.error().message().c_str());
      const double s = std::chrono::duration<double>(t1 - t0).count();
      seconds[k].push_back(s);
      total += s;
    }
    state.SetIterationTime(total);
  }
  for (int k = 0; k < 5; ++k) {
    std::vector<double> v(seconds[k].begin() + 1, seconds[k].end());  // the first run dropped, as BabelStream does
    std::sort(v.begin(), v.end());
    const double bytes = static_cast<double>(roster::bytes_moved(p[k].steps()[0]));
    state.counters[std::string(names[k]) + "_best_GBps"] = bytes / v.front() * 1e-9;
    state.counters[std::string(names[k]) + "_median_GBps"] = bytes / v[v.size() / 2] * 1e-9;
  }
  state.counters["runs"] = static_cast<double>(seconds[0].size() - 1);
  state.SetLabel("host clock around dispatch and synchronize, classic order, first run dropped");
}
BENCHMARK_TEMPLATE(BM_stream_host_clock, float)->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_stream_host_clock, double)->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMillisecond);

// triad then dot: one fused program (one pass) against the two as separate programs.
template <class T>
void BM_triad_dot(benchmark::State& state) {
  auto& st = state_of();
  if (!st.dev) return state.SkipWithError(("no CUDA device: " + st.why).c_str());
  const arrays& x = std::is_same_v<T, double> ? st.f64 : st.f32;
  if (auto ok = st.dev->set_mode(rc::grid_sync_mode::native); !ok) return state.SkipWithError("no cooperative launch");
  const bool fused = state.range(0) == 1;
  program triad, dot, both;
  triad.triad(x.a, x.b, x.c, 0.4);
  dot.dot(x.r, x.a, x.b);
  both.triad(x.a, x.b, x.c, 0.4).dot(x.r, x.a, x.b);
  state.SetLabel(fused ? "fused program" : "two programs (baseline)");
  // Counted as the two ops would move alone, so the figures compare directly.
  const double bytes = static_cast<double>(roster::bytes_moved(triad.steps()[0]) + roster::bytes_moved(dot.steps()[0]));
  time_program(state, *st.dev, fused ? std::vector<program>{both} : std::vector<program>{triad, dot}, bytes);
}
BENCHMARK_TEMPLATE(BM_triad_dot, float)->Arg(0)->Arg(1)->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_triad_dot, double)->Arg(0)->Arg(1)->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMillisecond);

// dot with native grid sync (one cooperative launch) against the split (two launches).
template <class T>
void BM_dot_grid_sync(benchmark::State& state) {
  auto& st = state_of();
  if (!st.dev) return state.SkipWithError(("no CUDA device: " + st.why).c_str());
  const arrays& x = std::is_same_v<T, double> ? st.f64 : st.f32;
  const auto mode = state.range(0) == 1 ? rc::grid_sync_mode::native : rc::grid_sync_mode::split;
  if (auto ok = st.dev->set_mode(mode); !ok) return state.SkipWithError(ok.error().message().c_str());
  // Two sizes: the full 2^28, and 2^20 where the launch and sync costs show.
  const std::size_t n = static_cast<std::size_t>(state.range(1));
  program p;
  buffer a = x.a, b = x.b;
  if (n != stream_n) {
    auto sa = st.dev->allocate<T>(n), sb = st.dev->allocate<T>(n);
    if (!sa || !sb) return state.SkipWithError("allocation failed");
    (void)st.dev->dispatch(program().fill(*sa, 0.1).fill(*sb, 0.2));
    a = *sa, b = *sb;
  }
  p.dot(x.r, a, b);
  state.SetLabel(std::string(rc::to_string(mode)) + (mode == rc::grid_sync_mode::split ? " (baseline)" : ""));
  time_program(state, *st.dev, {p}, static_cast<double>(roster::bytes_moved(p.steps()[0])));
  if (n != stream_n) (void)st.dev->release(a), (void)st.dev->release(b);
  (void)st.dev->set_mode(rc::grid_sync_mode::native);
}
BENCHMARK_TEMPLATE(BM_dot_grid_sync, float)
    ->ArgsProduct({{0, 1}, {1 << 20, 1 << 28}})->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_dot_grid_sync, double)
    ->ArgsProduct({{0, 1}, {1 << 20, 1 << 28}})->Iterations(timed_runs)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Host-side cost of dispatching a one-step program of 1,024 floats (validation,
// planning, launch) against a bare cuLaunchKernel of the same kernel with
// the same grid on the same stream. The two alternate in rounds of 64 calls
// (the launch queue drained between rounds, outside the timing), so drift in
// a shared VM's host speed hits both; counters give the median per call.
void BM_dispatch_host_cost(benchmark::State& state) {
  auto& st = state_of();
  if (!st.dev) return state.SkipWithError(("no CUDA device: " + st.why).c_str());
  auto a = st.dev->allocate<float>(1024), c = st.dev->allocate<float>(1024);
  if (!a || !c) return state.SkipWithError("allocation failed");
  program p;
  p.copy(*c, *a);
  namespace kd = roster::cuda::detail;
  kd::stream_args args{st.dev->native_pointer(*c), st.dev->native_pointer(*a), nullptr, 0.0, 1024};
  void* argv[] = {&args};
  // The same kernel from the same image, loaded again in the device's context
  // (made current by the native handles).
  (void)roster::native<rc::native>(*st.dev);
  kd::kernel_set ks;
  std::string what;
  if (kd::load_kernels(ks, kd::default_variant, what) != kd::cu_success) return state.SkipWithError(what.c_str());
  const kd::driver_api& cu = kd::api();
  auto stream = static_cast<kd::cu_stream>(st.dev->native_stream());
  const int grid = kd::stream_grid(kd::k_copy, 1024, false, 1, kd::default_variant);  // the grid roster's dispatch picks
  const auto block = static_cast<unsigned>(kd::stream_block(kd::k_copy, kd::default_variant));
  constexpr int per_round = 64;
  std::vector<double> bare_ns, roster_ns;
  using clock = std::chrono::steady_clock;
  for (auto _ : state) {
    auto t0 = clock::now();
    for (int i = 0; i < per_round; ++i)
      if (cu.cuLaunchKernel(ks.stream[0][kd::k_copy], static_cast<unsigned>(grid), 1, 1, block, 1, 1, 0, stream,
                            argv, nullptr) != kd::cu_success)
        return state.SkipWithError("cuLaunchKernel failed");
    auto t1 = clock::now();
    state.PauseTiming();
    (void)st.dev->synchronize();
    state.ResumeTiming();
    auto t2 = clock::now();
    for (int i = 0; i < per_round; ++i)
      if (auto ok = st.dev->dispatch(p); !ok) return state.SkipWithError(ok.error().message().c_str());
    auto t3 = clock::now();
    state.PauseTiming();
    (void)st.dev->synchronize();
    state.ResumeTiming();
    bare_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_round);
    roster_ns.push_back(std::chrono::duration<double, std::nano>(t3 - t2).count() / per_round);
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  state.counters["bare_launch_ns"] = median(bare_ns);
  state.counters["roster_dispatch_ns"] = median(roster_ns);
  state.SetLabel("per call, median of rounds");
  (void)cu.cuModuleUnload(ks.module);
  (void)st.dev->release(*a), (void)st.dev->release(*c);
}
BENCHMARK(BM_dispatch_host_cost)->Iterations(400)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
