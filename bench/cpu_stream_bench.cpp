// STREAM on the CPU backend against a plain OpenMP `parallel for` of the
// same op, in one binary compiled with one set of flags: copy, mul, add,
// triad and dot at 2^25 doubles (--n=... to change), GB/s counted as
// BabelStream does (copy, mul, dot move 2 arrays, add and triad 3). Both run
// on the same number of threads (ROSTER_CPU_THREADS, else every hardware one).
// roster_cpu_no_streaming/* is the backend with its streaming stores turned
// off, to show what they add; */chain* runs copy, mul, add, triad back to back
// (roster: one fused program, or four programs; OpenMP: four loops).
//
// Each benchmark's label names the instruction set its loop runs: roster's
// plain loops run their AVX2 copy where the build targets the x86-64
// baseline and the CPU has AVX2 (cpu::device::wide_loops()), so the OpenMP
// loops are compiled twice too, for the build's target and for AVX2, and
// run the copy roster's plain loops run. roster's streaming stores are its
// 32-byte non-temporal loop in that AVX2 copy (else the 16-byte one compiled
// for the build's target); their label says so. scripts/bench-check fails a
// like-for-like row whose labels (or, for the streaming rows, whose isa=
// parts) differ.
#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace {

std::size_t n = std::size_t{1} << 25;
constexpr double start_a = 0.1, start_b = 0.2, start_c = 0.0, scalar = 0.4;

enum class kernel { copy, mul, add, triad, dot };

std::size_t bytes_of(kernel k) {
  const std::size_t arrays = (k == kernel::add || k == kernel::triad) ? 3 : 2;
  return arrays * n * sizeof(double);
}

void set_counters(benchmark::State& state, kernel k) {
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes_of(k)) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["n"] = static_cast<double>(n);
  state.counters["threads"] = omp_get_max_threads();
}

// ---- the baseline: OpenMP parallel for over the same memory ----------------
//
// The OpenMP loops run over roster's own buffers (their host pointers), so
// the two sides differ in nothing but the code that drives the loop: the
// same pages, placed by the same first touch (the CPU backend zeroes a new
// buffer with the partition the loops use, as BabelStream's OpenMP model
// does with its static schedule). With separate arrays, on the GPU nodes'
// hosts (virtual machines), which side led changed from op to op and from
// run to run, by up to 25%; over the same memory, roster's dispatch and the
// OpenMP loop stayed within a few percent (probe2 in
// bench/results/h200-2026-11-30c).

struct omp_arrays {
  double* a;
  double* b;
  double* c;
  omp_arrays();
};

omp_arrays& omp() {
  static omp_arrays arrays;
  return arrays;
}

// One OpenMP loop of kernel k. The body is written once and compiled into
// two functions, the build's target and AVX2: the pragma must stand inside
// the function that carries the target attribute, so that the loop GCC
// outlines for the threads is compiled for it too.
#define ROSTER_BENCH_OMP_LOOPS                                                  \
  double sum = 0.0;                                                             \
  switch (k) {                                                                  \
    case kernel::copy:                                                          \
      _Pragma("omp parallel for schedule(static)")                              \
      for (std::size_t i = 0; i < len; ++i) c[i] = a[i];                        \
      break;                                                                    \
    case kernel::mul:                                                           \
      _Pragma("omp parallel for schedule(static)")                              \
      for (std::size_t i = 0; i < len; ++i) b[i] = scalar * c[i];               \
      break;                                                                    \
    case kernel::add:                                                           \
      _Pragma("omp parallel for schedule(static)")                              \
      for (std::size_t i = 0; i < len; ++i) c[i] = a[i] + b[i];                 \
      break;                                                                    \
    case kernel::triad:                                                         \
      _Pragma("omp parallel for schedule(static)")                              \
      for (std::size_t i = 0; i < len; ++i) a[i] = b[i] + scalar * c[i];        \
      break;                                                                    \
    case kernel::dot:                                                           \
      _Pragma("omp parallel for schedule(static) reduction(+ : sum)")           \
      for (std::size_t i = 0; i < len; ++i) sum += a[i] * b[i];                 \
      break;                                                                    \
  }                                                                             \
  return sum

__attribute__((noinline)) double omp_loops(kernel k, double* __restrict a, double* __restrict b,
                                           double* __restrict c, std::size_t len) {
  ROSTER_BENCH_OMP_LOOPS;
}

#if ROSTER_CPU_WIDE_CLONE
__attribute__((noinline)) ROSTER_CPU_WIDE double omp_loops_wide(kernel k, double* __restrict a,
                                                                double* __restrict b, double* __restrict c,
                                                                std::size_t len) {
  ROSTER_BENCH_OMP_LOOPS;
}
#endif

// The instruction set a build's own loops target, from the compiler's macros.
const char* build_isa() {
#if defined(__AVX512F__)
  return "avx512f";
#elif defined(__AVX2__)
  return "avx2";
#elif defined(__SSE2__)
  return "sse2";
#else
  return "the build's target";
#endif
}

std::string isa_label(bool wide) { return std::string("isa=") + (wide ? "avx2" : build_isa()); }

bool roster_wide_loops();

void omp_kernel(benchmark::State& state, kernel k) {
  auto& m = omp();
  // The copy roster's plain loops run (see the top of this file).
  const bool wide = roster_wide_loops();
  for (auto _ : state) {
#if ROSTER_CPU_WIDE_CLONE
    const double sum = wide ? omp_loops_wide(k, m.a, m.b, m.c, n) : omp_loops(k, m.a, m.b, m.c, n);
#else
    const double sum = omp_loops(k, m.a, m.b, m.c, n);
#endif
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  set_counters(state, k);
  state.SetLabel(isa_label(wide));
}

// ---- roster's CPU backend ---------------------------------------------------

std::size_t default_threshold() {
  static const std::size_t t = [] {
    auto d = roster::open_as<roster::cpu::backend>();
    return d ? (*d)->streaming_threshold() : std::size_t{32} << 20;
  }();
  return t;
}

struct roster_arrays {
  std::unique_ptr<roster::device> device;
  roster::buffer a, b, c, r;
  roster::program programs[5];
  roster::program chain;  // copy, mul, add, triad in one segment: one fused pass
  roster_arrays() {
    auto d = roster::acquire("cpu", {.force_split = false});
    if (!d) {
      std::fprintf(stderr, "cpu_stream_bench: %s\n", d.error().message().c_str());
      std::exit(1);
    }
    device = std::move(*d);
    auto get = [&](std::size_t len) {
      auto x = device->allocate<double>(len);
      if (!x) {
        std::fprintf(stderr, "cpu_stream_bench: %s\n", x.error().message().c_str());
        std::exit(1);
      }
      return *x;
    };
    a = get(n), b = get(n), c = get(n), r = get(1);
    roster::program init;
    init.fill(a, start_a).fill(b, start_b).fill(c, start_c);
    if (!device->dispatch(init)) std::exit(1);
    programs[0].copy(c, a);
    programs[1].mul(b, c, scalar);
    programs[2].add(c, a, b);
    programs[3].triad(a, b, c, scalar);
    programs[4].dot(r, a, b);
    chain.copy(c, a).mul(b, c, scalar).add(c, a, b).triad(a, b, c, scalar);
  }
};

roster_arrays& ros() {
  static roster_arrays arrays;
  return arrays;
}

bool roster_wide_loops() {
  auto* cpu = dynamic_cast<roster::cpu::device*>(ros().device.get());
  return cpu != nullptr && cpu->wide_loops();
}

omp_arrays::omp_arrays() {
  auto& r = ros();
  auto host = [&](const roster::buffer& b) {
    auto x = roster::native_buffer<roster::cpu::native>(*r.device, b);
    if (!x) {
      std::fprintf(stderr, "cpu_stream_bench: %s\n", x.error().message().c_str());
      std::exit(1);
    }
    return static_cast<double*>(x->data);
  };
  a = host(r.a);
  b = host(r.b);
  c = host(r.c);
}

// Times one program on the CPU device, with streaming stores for steps of at
// least `threshold` elements; leaves the default threshold behind.
void time_roster(benchmark::State& state, kernel k, std::size_t threshold) {
  auto& m = ros();
  auto* cpu = dynamic_cast<roster::cpu::device*>(m.device.get());
  if (cpu != nullptr) cpu->set_streaming_threshold(threshold);
  const roster::program& p = m.programs[static_cast<int>(k)];
  for (auto _ : state) {
    auto ok = m.device->dispatch(p);
    if (!ok) {
      state.SkipWithError(ok.error().message().c_str());
      break;
    }
  }
  if (cpu != nullptr) cpu->set_streaming_threshold(default_threshold());
  set_counters(state, k);
  // A one-step program over at least the threshold's bytes streams its stores
  // (dot has none to stream): the AVX2 copy's 32-byte non-temporal loop where
  // the plain loops run the AVX2 copy or the build targets AVX2, else the
  // 16-byte one compiled for the build's target.
  const bool streams = k != kernel::dot && roster::cpu::detail::cpu_has_streaming && bytes_of(k) > threshold;
  const bool wide_streams =
      roster::cpu::detail::cpu_has_wide_streaming && (roster_wide_loops() || !roster::cpu::detail::cpu_has_wide_clone);
  state.SetLabel(!streams       ? isa_label(roster_wide_loops())
                 : wide_streams ? isa_label(true) + ", 32-byte streaming stores"
                                : std::string("isa=") + build_isa() + ", 16-byte streaming stores");
}

void roster_kernel(benchmark::State& state, kernel k) { time_roster(state, k, default_threshold()); }

// The same device with streaming stores off: shows what they contribute.
void roster_kernel_cached(benchmark::State& state, kernel k) { time_roster(state, k, ~std::size_t{0}); }

}  // namespace

#define ROSTER_BENCH_PAIR(name)                                                                               \
  BENCHMARK_CAPTURE(omp_kernel, name, kernel::name)->Name("openmp/" #name)->UseRealTime();                    \
  BENCHMARK_CAPTURE(roster_kernel, name, kernel::name)->Name("roster_cpu/" #name)->UseRealTime();             \
  BENCHMARK_CAPTURE(roster_kernel_cached, name, kernel::name)->Name("roster_cpu_no_streaming/" #name)->UseRealTime()
ROSTER_BENCH_PAIR(copy);
ROSTER_BENCH_PAIR(mul);
ROSTER_BENCH_PAIR(add);
ROSTER_BENCH_PAIR(triad);
ROSTER_BENCH_PAIR(dot);

namespace {
// The four element-wise kernels back to back. The fused program makes one
// pass over memory; the OpenMP baseline and the separate programs make four.
// GB/s counts the bytes of the four kernels (10 arrays), as if run apart.
constexpr std::size_t chain_arrays = 10;
void set_chain_counters(benchmark::State& state) {
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(chain_arrays * n * sizeof(double)) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["n"] = static_cast<double>(n);
}
void omp_chain(benchmark::State& state) {
  auto& m = omp();
  double* __restrict a = m.a;
  double* __restrict b = m.b;
  double* __restrict c = m.c;
  const std::size_t len = n;
  for (auto _ : state) {
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (std::size_t i = 0; i < len; ++i) c[i] = a[i];
#pragma omp for schedule(static)
      for (std::size_t i = 0; i < len; ++i) b[i] = scalar * c[i];
#pragma omp for schedule(static)
      for (std::size_t i = 0; i < len; ++i) c[i] = a[i] + b[i];
#pragma omp for schedule(static)
      for (std::size_t i = 0; i < len; ++i) a[i] = b[i] + scalar * c[i];
    }
    benchmark::ClobberMemory();
  }
  set_chain_counters(state);
}
void roster_chain_fused(benchmark::State& state) {
  auto& m = ros();
  for (auto _ : state)
    if (!m.device->dispatch(m.chain)) state.SkipWithError("dispatch failed");
  set_chain_counters(state);
}
void roster_chain_separate(benchmark::State& state) {
  auto& m = ros();
  for (auto _ : state)
    for (int k = 0; k < 4; ++k)
      if (!m.device->dispatch(m.programs[k])) state.SkipWithError("dispatch failed");
  set_chain_counters(state);
}
}  // namespace
BENCHMARK(omp_chain)->Name("openmp/chain")->UseRealTime();
BENCHMARK(roster_chain_fused)->Name("roster_cpu/chain_fused")->UseRealTime();
BENCHMARK(roster_chain_separate)->Name("roster_cpu/chain_separate")->UseRealTime();

int main(int argc, char** argv) {
  // Our own flag first: --n=ELEMENTS.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--n=", 4) == 0) n = std::strtoull(argv[i] + 4, nullptr, 10);
    else argv[kept++] = argv[i];
  }
  argc = kept;
  // The same thread count for both.
  auto threads = roster::cpu::thread_count();
  if (!threads) {
    std::fprintf(stderr, "cpu_stream_bench: %s\n", threads.error().message().c_str());
    return 1;
  }
  omp_set_num_threads(static_cast<int>(*threads));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
