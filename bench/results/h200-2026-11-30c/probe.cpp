// Node-host experiment: does a wider-vector add (AVX2 / AVX-512, chosen at run time) close the gap?
#include <roster/backends/cpu/detail/kernels.hpp>
#include <roster/backends/cpu/detail/pool.hpp>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <vector>
using namespace roster::cpu::detail;
static std::size_t n = std::size_t{1} << 25;
static constexpr std::size_t be = 2048;
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
#define ADD_BODY { std::size_t i = 0; for (; i + 16 <= m; i += 16) for (std::size_t j = 0; j < 16; ++j) c[i + j] = a[i + j] + b[i + j]; for (; i < m; ++i) c[i] = a[i] + b[i]; }
#define TRIAD_BODY { std::size_t i = 0; for (; i + 16 <= m; i += 16) for (std::size_t j = 0; j < 16; ++j) a[i + j] = b[i + j] + s * c[i + j]; for (; i < m; ++i) a[i] = b[i] + s * c[i]; }
__attribute__((target("avx2"), noinline)) void add_avx2(double* __restrict c, const double* __restrict a, const double* __restrict b, std::size_t m) ADD_BODY
__attribute__((target("avx512f"), noinline)) void add_avx512(double* __restrict c, const double* __restrict a, const double* __restrict b, std::size_t m) ADD_BODY
__attribute__((target("avx512f,prefer-vector-width=512"), noinline)) void add_avx512w(double* __restrict c, const double* __restrict a, const double* __restrict b, std::size_t m) ADD_BODY
__attribute__((target("avx2"), noinline)) void triad_avx2(double* __restrict a, const double* __restrict b, const double* __restrict c, double s, std::size_t m) TRIAD_BODY
__attribute__((target("avx512f,prefer-vector-width=512"), noinline)) void triad_avx512w(double* __restrict a, const double* __restrict b, const double* __restrict c, double s, std::size_t m) TRIAD_BODY
__attribute__((target("avx2"), noinline)) void copy_avx2(double* __restrict c, const double* __restrict a, std::size_t m) { std::size_t i = 0; for (; i + 16 <= m; i += 16) for (std::size_t j = 0; j < 16; ++j) c[i + j] = a[i + j]; for (; i < m; ++i) c[i] = a[i]; }
int main(int argc, char** argv) {
  unsigned T = omp_get_max_threads();
  int rounds = argc > 1 ? atoi(argv[1]) : 5, reps = 20;
  cpu_pool pool(T);
  std::size_t by = n * 8; double* p[3];
  for (auto& q : p) { q = (double*)::operator new(by, std::align_val_t{64});
    std::size_t blocks = (n + be - 1) / be; auto touch = [&](unsigned t) noexcept {
      std::size_t lo = blocks * t / T * be, hi = std::min(n, blocks * (t + 1) / T * be);
      if (lo < hi) std::memset(q + lo, 0, (hi - lo) * 8); }; pool.run_each(touch); }
  double *a = p[0], *b = p[1], *c = p[2];
  for (std::size_t i = 0; i < n; ++i) { a[i] = 0.1; b[i] = 0.2; }
  std::map<std::string, std::vector<double>> gbs;
  auto range = [&](unsigned t, std::size_t& lo, std::size_t& hi) { std::size_t blocks = (n + be - 1) / be;
    lo = blocks * t / T * be; hi = std::min(n, blocks * (t + 1) / T * be); };
  auto timeit = [&](const std::string& name, double bytes, auto&& f) {
    f(); std::vector<double> ts; for (int r = 0; r < reps; ++r) { double t0 = now(); f(); ts.push_back(now() - t0); }
    std::sort(ts.begin(), ts.end()); gbs[name].push_back(bytes / ts[reps / 2] / 1e9); };
  auto on_pool = [&](auto fn) { auto job = [&](unsigned t) noexcept { std::size_t lo, hi; range(t, lo, hi); if (lo < hi) fn(lo, hi - lo); }; pool.run_each(job); };
  for (int round = 0; round < rounds; ++round) {
    timeit("add   omp-loop (portable)", 24.0 * n, [&] {
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i]; });
    timeit("add   pool sse2 (baseline loops)", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { cpu_add(c + lo, a + lo, b + lo, m); }); });
    timeit("add   pool avx2", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { add_avx2(c + lo, a + lo, b + lo, m); }); });
    timeit("add   pool avx512f", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { add_avx512(c + lo, a + lo, b + lo, m); }); });
    timeit("add   pool avx512f zmm", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { add_avx512w(c + lo, a + lo, b + lo, m); }); });
    timeit("add   pool avx2 into a", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { add_avx2(a + lo, b + lo, c + lo, m); }); });
    timeit("add   omp-loop into a", 24.0 * n, [&] {
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + c[i]; });
    timeit("copy  pool avx2", 16.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { copy_avx2(c + lo, a + lo, m); }); });
    timeit("copy  omp-loop", 16.0 * n, [&] {
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i]; });
    timeit("triad pool sse2 (baseline loops)", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { cpu_triad(a + lo, b + lo, c + lo, 0.4, m); }); });
    timeit("triad pool avx2", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { triad_avx2(a + lo, b + lo, c + lo, 0.4, m); }); });
    timeit("triad pool avx512f zmm", 24.0 * n, [&] { on_pool([&](std::size_t lo, std::size_t m) { triad_avx512w(a + lo, b + lo, c + lo, 0.4, m); }); });
  }
  for (auto& [k, v] : gbs) { auto s = v; std::sort(s.begin(), s.end());
    std::printf("%-34s median %7.1f GB/s  min %7.1f max %7.1f (%zu rounds)\n", k.c_str(), s[s.size() / 2], s.front(), s.back(), s.size()); }
}
