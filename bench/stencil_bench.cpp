// The stencil example's kernels through roster, each against its baseline in
// the same binary (examples/stencil: jacobi.hpp's point function on the CPU,
// jacobi.cu's launchers on CUDA, compiled into this program, not copied):
//
// - stencil_paired: one Jacobi step per dispatch of a program that calls the
//   variant by name on a roster device, against the same entry point run by
//   hand: on CUDA the variant's launcher on roster's stream with the same
//   device pointers; on the CPU the same function on the device's own pool
//   (roster::cpu::native::run_on_threads) over the same parts of the grid.
//   Paired rounds, the order alternating, so drift hits both; GB/s counts
//   2 x 8 bytes per point for both. A last step each way from the same grid
//   must write the same values.
// - stencil_tuned: roster::tune_kernel times the variants (each result checked
//   against the CPU reference) and the winner is recorded in a tuning file in
//   a temporary folder (XDG_CACHE_HOME, never the user's); then, in rotating
//   rounds, each variant alone (named in the call) and a call that names none
//   on a device acquired with the record. Counters: each variant's GB/s, the
//   best alone, the default's and the tuned call's.
//
// The CPU has two variants here: "plain" (the example's, a point at a time
// through jacobi_point, which divides to find the row) and "rows", which
// walks each row's interior with no division or boundary test; the default
// (plain) is the slower one, so a tuned call that ignored its record would
// run at the default's speed and fail the tuned rows.
//
// On CUDA the example's two variants run equally fast on an H200, where a
// tuned call could not tell an applied record from an ignored one. The
// tuned rows there time the bench's own op, "jacobi_bench": its default
// variant "twice" launches the example's plain kernel two times (the same
// output, twice the time), beside "plain" and "tiled", which launch the
// example's kernels once.
#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>
#include <roster/variants.hpp>

#if defined(STENCIL_BENCH_CUDA)
#  include <roster/backends/cuda.hpp>
#endif

#include "jacobi.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

// The example's CPU variant: each pool thread runs its share of the points.
template <class T>
void jacobi_points(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* out = a.data<T>(0);
  const T* in = a.data<const T>(1);
  const auto nx = a.scalar<std::uint32_t>(0), ny = a.scalar<std::uint32_t>(1);
  for (std::size_t k = begin; k < end; ++k) out[k] = stencil::jacobi_point(in, k, nx, ny);
}
ROSTER_CPU_KERNEL("jacobi", "plain", roster::default_variant, jacobi_points, roster::write<roster::elem>,
                  roster::read<roster::elem>, roster::scalar<std::uint32_t>, roster::scalar<std::uint32_t>);

// A second CPU variant, a row at a time: the boundary points through
// jacobi_point, the interior in one loop with no division and no test. The
// same sum in the same order as jacobi_point, so the results are equal.
template <class T>
void jacobi_rows(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* out = a.data<T>(0);
  const T* in = a.data<const T>(1);
  const auto nx = a.scalar<std::uint32_t>(0), ny = a.scalar<std::uint32_t>(1);
  std::size_t k = begin;
  while (k < end) {
    const std::size_t j = k / nx, row = j * nx, row_end = std::min<std::size_t>(end, row + nx);
    if (j == 0 || j + 1 == ny || nx < 3) {
      for (; k < row_end; ++k) out[k] = stencil::jacobi_point(in, k, nx, ny);
      continue;
    }
    if (k == row) out[k] = in[k], ++k;
    const std::size_t stop = std::min<std::size_t>(row_end, row + nx - 1);
    for (; k < stop; ++k) out[k] = T(0.25) * ((in[k - 1] + in[k + 1]) + (in[k - nx] + in[k + nx]));
    if (k < row_end) out[k] = in[k], ++k;  // the row's last point
  }
}
ROSTER_CPU_KERNEL("jacobi", "rows", roster::other_variant, jacobi_rows, roster::write<roster::elem>,
                  roster::read<roster::elem>, roster::scalar<std::uint32_t>, roster::scalar<std::uint32_t>);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

std::string spec_of(const std::string& backend) { return backend == "cuda" ? "cuda:0" : "cpu"; }

#if defined(STENCIL_BENCH_CUDA)
// The example's launchers, found in the kernel inventory before any benchmark runs.
roster::cuda::launcher_fn example_plain = nullptr, example_tiled = nullptr;

roster::cuda::launcher_fn example_launcher(const char* variant) {
  auto e = roster::find_kernel("jacobi", "cuda", roster::element_type::f64, variant);
  return e ? (*e)->payload_as<roster::cuda::launcher>()->fn : nullptr;
}

void bench_twice(const roster::kernel_args& a, void* stream) {
  example_plain(a, stream);
  example_plain(a, stream);  // the same step again: the same output, twice the time
}
void bench_plain(const roster::kernel_args& a, void* stream) { example_plain(a, stream); }
void bench_tiled(const roster::kernel_args& a, void* stream) { example_tiled(a, stream); }

constinit const roster::kernel_entry bench_twice_f64 =
    roster::cuda::kernel<&bench_twice, roster::write<double>, roster::read<double>, roster::scalar<std::uint32_t>,
                        roster::scalar<std::uint32_t>>("jacobi_bench", "twice", roster::default_variant);
constinit const roster::kernel_entry bench_plain_f64 =
    roster::cuda::kernel<&bench_plain, roster::write<double>, roster::read<double>, roster::scalar<std::uint32_t>,
                        roster::scalar<std::uint32_t>>("jacobi_bench", "plain", roster::other_variant);
constinit const roster::kernel_entry bench_tiled_f64 =
    roster::cuda::kernel<&bench_tiled, roster::write<double>, roster::read<double>, roster::scalar<std::uint32_t>,
                        roster::scalar<std::uint32_t>>("jacobi_bench", "tiled", roster::other_variant);
#endif

// Two grids of nx x ny doubles on a device, the first filled with fixed values.
struct grids {
  roster::buffer a, b;
  std::uint32_t nx = 0, ny = 0;
  [[nodiscard]] std::size_t points() const noexcept { return std::size_t{nx} * ny; }
  [[nodiscard]] double bytes_per_step() const noexcept { return 2.0 * sizeof(double) * static_cast<double>(points()); }
};

roster::expected<grids> make_grids(roster::device& d, std::uint32_t nx, std::uint32_t ny) {
  grids g;
  g.nx = nx;
  g.ny = ny;
  auto a = d.allocate<double>(g.points()), b = d.allocate<double>(g.points());
  if (!a) return std::move(a).error();
  if (!b) return std::move(b).error();
  g.a = *a;
  g.b = *b;
  std::vector<double> init(g.points());
  for (std::size_t k = 0; k < init.size(); ++k) init[k] = static_cast<double>((k * 7919) % 101) / 101.0;
  if (auto ok = d.upload(g.a, std::span<const double>(init)); !ok) return std::move(ok).error();
  if (auto ok = d.upload(g.b, std::span<const double>(init)); !ok) return std::move(ok).error();
  if (auto ok = d.synchronize(); !ok) return std::move(ok).error();
  return g;
}

// The two programs of a step, a to b and b to a, calling `variant` (empty: none named).
struct step_programs {
  roster::program ab, ba;
};
step_programs steps_of(const grids& g, const std::string& variant, const std::string& op = "jacobi") {
  step_programs s;
  const roster::call_options o{0, variant};
  s.ab.call(op, {g.b, g.a}, {g.nx, g.ny}, o);
  s.ba.call(op, {g.a, g.b}, {g.nx, g.ny}, o);
  return s;
}

// Runs `batch` steps of one way and waits for them; returns ns per step.
template <class Step>
double timed_steps(roster::device& d, int batch, Step&& step, bool& failed) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < batch; ++i) failed |= !step(i % 2 == 0);
  failed |= !d.synchronize();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / batch;
}

// The hand-run baseline of one step: a->b when `forward`, else b->a.
using hand_step = std::function<bool(bool forward)>;

roster::expected<hand_step> hand_runner(roster::device& d, const grids& g, const std::string& variant) {
  const std::string backend(d.adapter().backend);
  auto entry = roster::find_kernel("jacobi", backend, roster::element_type::f64, variant);
  if (!entry) return std::move(entry).error();
  auto scalars = std::make_shared<std::vector<roster::scalar_arg>>(
      std::vector<roster::scalar_arg>{roster::scalar_arg(g.nx), roster::scalar_arg(g.ny)});
  auto bufs = std::make_shared<std::vector<roster::kernel_buffer>>(4);
  const std::size_t n = g.points();
#if defined(STENCIL_BENCH_CUDA)
  if (backend == "cuda") {
    auto h = roster::native<roster::cuda::native>(d);
    if (!h) return std::move(h).error();
    auto pa = roster::native_buffer<roster::cuda::native>(d, g.a);
    auto pb = roster::native_buffer<roster::cuda::native>(d, g.b);
    if (!pa) return std::move(pa).error();
    if (!pb) return std::move(pb).error();
    (*bufs)[0] = {pb->pointer, n, roster::element_type::f64};  // a -> b: out b, in a
    (*bufs)[1] = {pa->pointer, n, roster::element_type::f64};
    (*bufs)[2] = (*bufs)[1];  // b -> a
    (*bufs)[3] = (*bufs)[0];
    const roster::cuda::launcher_fn launch = (*entry)->payload_as<roster::cuda::launcher>()->fn;
    void* stream = h->stream;
    return hand_step([=](bool forward) {
      const roster::kernel_args args{std::span(bufs->data() + (forward ? 0 : 2), 2), *scalars, n};
      launch(args, stream);
      return true;
    });
  }
#endif
  auto h = roster::native<roster::cpu::native>(d);
  if (!h) return std::move(h).error();
  auto pa = roster::native_buffer<roster::cpu::native>(d, g.a);
  auto pb = roster::native_buffer<roster::cpu::native>(d, g.b);
  if (!pa) return std::move(pa).error();
  if (!pb) return std::move(pb).error();
  (*bufs)[0] = {pb->data, n, roster::element_type::f64};
  (*bufs)[1] = {pa->data, n, roster::element_type::f64};
  (*bufs)[2] = (*bufs)[1];
  (*bufs)[3] = (*bufs)[0];
  const roster::host_kernel_fn fn = (*entry)->payload_as<roster::host_kernel>()->fn;
  const roster::cpu::native pool = *h;
  // The parts the device gives its threads: [n t / threads, n (t + 1) / threads).
  return hand_step([=](bool forward) {
    const roster::kernel_args args{std::span(bufs->data() + (forward ? 0 : 2), 2), *scalars, n};
    return pool
        .run_on_threads([&](unsigned t, unsigned threads) { fn(args, n * t / threads, n * (t + 1) / threads); })
        .has_value();
  });
}

// stencil_paired/<backend>/<variant>/<nx>: a step through roster against the
// same entry point run by hand, in paired rounds.
void stencil_paired(benchmark::State& state, const std::string& backend, const std::string& variant,
                    std::uint32_t nx, int batch) {
  auto dev = roster::acquire(spec_of(backend));
  if (!dev) return state.SkipWithError(dev.error().message().c_str());
  roster::device& d = **dev;
  auto g = make_grids(d, nx, nx);
  if (!g) return state.SkipWithError(g.error().message().c_str());
  const auto progs = steps_of(*g, variant);
  auto hand = hand_runner(d, *g, variant);
  if (!hand) return state.SkipWithError(hand.error().message().c_str());
  bool failed = false;
  auto through = [&](bool forward) { return d.dispatch(forward ? progs.ab : progs.ba).has_value(); };
  auto way = [&](int w) { return w == 0 ? timed_steps(d, batch, through, failed) : timed_steps(d, batch, *hand, failed); };
  (void)way(0), (void)way(1);  // warm-up
  std::vector<double> t[2];
  int round = 0;
  for (auto _ : state) {
    const int first = round++ % 2;
    t[first].push_back(way(first));
    t[1 - first].push_back(way(1 - first));
  }
  if (failed) return state.SkipWithError("a step failed");
  // Like for like: a step from the same grid through roster and by hand
  // writes the same values.
  std::vector<double> via_roster(g->points()), by_hand(g->points());
  if (!d.dispatch(progs.ab) || !d.synchronize() || !d.download(g->b, std::span<double>(via_roster)) ||
      !d.dispatch(roster::program().fill(g->b, -1.0)) || !(*hand)(true) || !d.synchronize() ||
      !d.download(g->b, std::span<double>(by_hand)))
    return state.SkipWithError("the check step failed");
  if (via_roster != by_hand) return state.SkipWithError("the step through roster and the step by hand differ");
  state.counters["roster_GBps"] = g->bytes_per_step() / median(t[0]);
  state.counters["hand_GBps"] = g->bytes_per_step() / median(t[1]);
  state.counters["roster_ns"] = median(t[0]);
  state.counters["hand_ns"] = median(t[1]);
  state.SetLabel(std::to_string(nx) + "x" + std::to_string(nx) + " doubles, " + std::to_string(d.adapter().compute_units) +
                 " compute units");
}

// stencil_tuned/<backend>/<nx>: the tuned choice among op's variants against each variant alone.
void stencil_tuned(benchmark::State& state, const std::string& backend, const std::string& op, std::uint32_t nx,
                   int batch) {
  const std::string spec = spec_of(backend);
  const std::size_t n = std::size_t{nx} * nx;
  roster::kernel_choice choice;
  std::vector<std::string> variants;
  {
    // Tune on a device that applies no record, and record the winner.
    auto dev = roster::acquire(spec, {});
    if (!dev) return state.SkipWithError(dev.error().message().c_str());
    roster::tune_options o;
    o.scalars = {roster::scalar_arg(nx), roster::scalar_arg(nx)};
    o.reference = &jacobi_points<double>;
    o.reps = 30;  // more than the default 10: a spread over 30 runs is less at the mercy of one preemption
    auto t = roster::tune_kernel(**dev, op, roster::element_type::f64, n, o);
    if (!t) return state.SkipWithError(t.error().message().c_str());
    if (!t->refused().empty()) return state.SkipWithError(t->refused().front().message().c_str());
    for (const auto& v : t->variants) {
      variants.push_back(v.variant);
      state.counters["tune_" + v.variant + "_us"] = v.median_ns / 1e3;
      state.counters["tune_" + v.variant + "_spread_pct"] = v.spread * 100;
    }
    choice = t->choice;
    auto path = roster::tuning_path();
    if (!path) return state.SkipWithError(path.error().message().c_str());
    if (auto ok = roster::record_kernel_choices((*dev)->adapter(), std::span(&choice, 1), *path); !ok)
      return state.SkipWithError(ok.error().message().c_str());
  }
  // The device as a program gets it: acquired with its tuning record (acquire
  // reads no file itself; the records in use are handed over).
  roster::acquire_options with_record;
  with_record.tuning = roster::current_tuning();
  auto dev = roster::acquire(spec, with_record);
  if (!dev) return state.SkipWithError(dev.error().message().c_str());
  roster::device& d = **dev;
  auto g = make_grids(d, nx, nx);
  if (!g) return state.SkipWithError(g.error().message().c_str());
  std::vector<step_programs> progs;
  for (const auto& v : variants) progs.push_back(steps_of(*g, v, op));
  progs.push_back(steps_of(*g, "", op));  // names no variant: the record's choice
  const auto runs = d.kernel_for(*progs.back().ab.steps().front().call);
  if (!runs) return state.SkipWithError(runs.error().message().c_str());
  if ((*runs)->variant != choice.variant)
    return state.SkipWithError(("the tuned device runs '" + std::string((*runs)->variant) + "', the record says '" +
                                choice.variant + "'")
                                   .c_str());
  auto base = roster::find_kernel(op, d.adapter().backend, roster::element_type::f64);
  if (!base) return state.SkipWithError(base.error().message().c_str());

  const std::size_t ways = progs.size();
  bool failed = false;
  auto way = [&](std::size_t w) {
    return timed_steps(d, batch, [&](bool forward) { return d.dispatch(forward ? progs[w].ab : progs[w].ba).has_value(); },
                       failed);
  };
  for (std::size_t w = 0; w < ways; ++w) (void)way(w);  // warm-up
  std::vector<std::vector<double>> t(ways);
  std::size_t round = 0;
  for (auto _ : state) {
    for (std::size_t k = 0; k < ways; ++k) {
      const std::size_t w = (round + k) % ways;
      t[w].push_back(way(w));
    }
    ++round;
  }
  if (failed) return state.SkipWithError("a step failed");
  double best = 0.0, dflt = 0.0;
  for (std::size_t w = 0; w + 1 < ways; ++w) {
    const double gbps = g->bytes_per_step() / median(t[w]);
    state.counters[variants[w] + "_GBps"] = gbps;
    best = std::max(best, gbps);
    if (variants[w] == (*base)->variant) dflt = gbps;
  }
  state.counters["best_alone_GBps"] = best;
  state.counters["default_GBps"] = dflt;
  state.counters["tuned_GBps"] = g->bytes_per_step() / median(t[ways - 1]);
  state.SetLabel(op + ", tuned: '" + choice.variant + "', default '" + std::string((*base)->variant) + "', " +
                 std::to_string(nx) + "x" + std::to_string(nx) + " doubles");
}

void register_all() {
  // The CPU: 2048 x 2048 doubles (64 MB per step), both variants.
  for (const char* v : {"plain", "rows"})
    benchmark::RegisterBenchmark((std::string("stencil_paired/cpu/") + v + "/2048").c_str(),
                                 [v](benchmark::State& s) { stencil_paired(s, "cpu", v, 2048, 4); })
        ->Iterations(20)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("stencil_tuned/cpu/2048",
                               [](benchmark::State& s) { stencil_tuned(s, "cpu", "jacobi", 2048, 4); })
      ->Iterations(20)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
#if defined(STENCIL_BENCH_CUDA)
  example_plain = example_launcher("plain");
  example_tiled = example_launcher("tiled");
  if (example_plain == nullptr || example_tiled == nullptr) {
    std::fprintf(stderr, "stencil_bench: the example's CUDA launchers are not in the kernel inventory\n"
                         "Fix: link examples/stencil/jacobi.cu's object into the bench (bench/meson.build)\n");
    std::exit(1);
  }
  // CUDA: 8192 x 8192 doubles (1 GiB per step), the plain and the tiled variant.
  for (const char* v : {"plain", "tiled"})
    benchmark::RegisterBenchmark((std::string("stencil_paired/cuda/") + v + "/8192").c_str(),
                                 [v](benchmark::State& s) { stencil_paired(s, "cuda", v, 8192, 20); })
        ->Iterations(20)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("stencil_tuned/cuda/8192",
                               [](benchmark::State& s) { stencil_tuned(s, "cuda", "jacobi_bench", 8192, 20); })
      ->Iterations(20)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
#endif
}

}  // namespace

#if defined(STENCIL_BENCH_CUDA)
ROSTER_KERNEL(bench_twice_f64);
ROSTER_KERNEL(bench_plain_f64);
ROSTER_KERNEL(bench_tiled_f64);
#endif

int main(int argc, char** argv) {
  // Tuning records go to a folder of this run, never the user's file.
  char dir[] = "/tmp/roster-stencil-bench-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    std::perror("stencil_bench: mkdtemp");
    return 1;
  }
  ::setenv("XDG_CACHE_HOME", dir, 1);
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
