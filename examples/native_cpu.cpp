// Native handles on the CPU: a roster program writes a buffer, your own code
// runs on roster's thread pool over the buffer's host memory, a second
// program continues (docs/native.md).
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto dev = roster::acquire("cpu");
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
  roster::device& d = **dev;
  const std::size_t n = 1 << 16;
  auto a = d.allocate<double>(n), b = d.allocate<double>(n);
  if (!a || !b) return 1;
  if (!d.dispatch(roster::program().fill(*a, 1.0).fill(*b, 0.0))) return 1;

  auto pool = roster::native<roster::cpu::native>(d);  // an error on a device of another backend
  auto host = roster::native_buffer<roster::cpu::native>(d, *a);
  if (!pool || !host) return std::fprintf(stderr, "%s\n", (pool ? host.error() : pool.error()).message().c_str()), 1;
  double* x = static_cast<double*>(host->data);
  auto ran = pool->run_on_threads([&](unsigned t, unsigned threads) {
    for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) x[i] = static_cast<double>(i);
    pool->barrier();  // every thread's part is written before any thread reads another's
  });
  if (!ran) return std::fprintf(stderr, "%s\n", ran.error().message().c_str()), 1;

  if (!d.dispatch(roster::program().mul(*b, *a, 2.0))) return 1;  // b[i] = 2 * i
  if (!d.synchronize()) return 1;
  std::vector<double> out(n);
  if (!d.download<double>(*b, out)) return 1;
  std::printf("b[%zu] = %g on %u threads\n", n - 1, out[n - 1], pool->threads);
  return out[n - 1] == 2.0 * static_cast<double>(n - 1) ? 0 : 1;
}
