// Same memory, three drivers: roster's dispatch, roster's pool by hand (native run_on_threads), OpenMP.
#include <roster/backends/cpu.hpp>
#include <roster/backends/cpu/detail/kernels.hpp>
#include <roster/roster.hpp>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>
using namespace roster::cpu::detail;
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
__attribute__((target("avx2"), noinline)) void add_avx2(double* __restrict c, const double* __restrict a, const double* __restrict b, std::size_t m) { cpu_add(c, a, b, m); }
__attribute__((target("avx2"), noinline)) void triad_avx2(double* __restrict a, const double* __restrict b, const double* __restrict c, double s, std::size_t m) { cpu_triad(a, b, c, s, m); }
int main(int argc, char** argv) {
  std::size_t n = std::size_t{1} << 25; int rounds = argc > 1 ? atoi(argv[1]) : 5, reps = 20;
  auto d = roster::cpu::backend::open(0); if (!d) { std::puts(d.error().message().c_str()); return 1; }
  auto& dev = **d; dev.set_streaming_threshold(~std::size_t{0});
  std::printf("threads %u wide %d\n", dev.threads(), (int)dev.wide_loops());
  omp_set_num_threads(dev.threads());
  auto A = *dev.allocate<double>(n), B = *dev.allocate<double>(n), C = *dev.allocate<double>(n);
  roster::program init; init.fill(A, 0.1).fill(B, 0.2).fill(C, 0.0); if (!dev.dispatch(init)) return 1;
  double* a = (double*)dev.address(A); double* b = (double*)dev.address(B); double* c = (double*)dev.address(C);
  std::printf("a %p b %p c %p (page offsets %lu %lu %lu)\n", (void*)a, (void*)b, (void*)c, (unsigned long)((std::uintptr_t)a & 4095), (unsigned long)((std::uintptr_t)b & 4095), (unsigned long)((std::uintptr_t)c & 4095));
  roster::program padd, ptriad; padd.add(C, A, B); ptriad.triad(A, B, C, 0.4);
  auto nat = roster::native<roster::cpu::native>(dev); if (!nat) { std::puts(nat.error().message().c_str()); return 1; }
  const std::size_t be = roster::cpu::block_elements, blocks = (n + be - 1) / be;
  auto range = [&](unsigned t, unsigned T, std::size_t& lo, std::size_t& hi) { lo = blocks * t / T * be; hi = std::min(n, blocks * (t + 1) / T * be); };
  std::map<std::string, std::vector<double>> gbs;
  auto timeit = [&](const std::string& name, auto&& f) {
    f(); std::vector<double> ts; for (int r = 0; r < reps; ++r) { double t0 = now(); f(); ts.push_back(now() - t0); }
    std::sort(ts.begin(), ts.end()); gbs[name].push_back(24.0 * n / ts[reps / 2] / 1e9); };
  for (int round = 0; round < rounds; ++round) {
    timeit("add   roster dispatch", [&] { (void)dev.dispatch(padd); });
    timeit("add   native pool avx2", [&] { (void)nat->run_on_threads([&](unsigned t, unsigned T) { std::size_t lo, hi; range(t, T, lo, hi); if (lo < hi) add_avx2(c + lo, a + lo, b + lo, hi - lo); }); });
    timeit("add   omp loop", [&] {
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i]; });
    timeit("triad roster dispatch", [&] { (void)dev.dispatch(ptriad); });
    timeit("triad native pool avx2", [&] { (void)nat->run_on_threads([&](unsigned t, unsigned T) { std::size_t lo, hi; range(t, T, lo, hi); if (lo < hi) triad_avx2(a + lo, b + lo, c + lo, 0.4, hi - lo); }); });
    timeit("triad omp loop", [&] {
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 0.4 * c[i]; });
  }
  for (auto& [k, v] : gbs) { auto s = v; std::sort(s.begin(), s.end());
    std::printf("%-26s median %7.1f GB/s  min %7.1f max %7.1f\n", k.c_str(), s[s.size() / 2], s.front(), s.back()); }
}
