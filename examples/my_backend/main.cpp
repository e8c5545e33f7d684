// Runs a program on my_backend's device, checks every result against the
// host, and checks that the adapter joined the host CPU's circuit. Exits 0
// and prints "myhost: ok" when all holds; prints what failed otherwise.

#include <my_backend.hpp>
#include <roster/roster.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#if defined(MY_BACKEND_USE_ANCHOR)
// Linked without link_whole: the anchor keeps the registration.
ROSTER_USE_BACKEND(myhost);
#endif

namespace {

// A user's kernel for this backend: y[i] += a * x[i], registered in roster's
// kernel inventory and called from a program by its op name.
void axpy(const roster::kernel_args& args) {
  double* y = args.data<double>(0);
  const double* x = args.data<const double>(1);
  for (std::size_t i = 0; i < args.extent; ++i) y[i] += args.scalar<double>(0) * x[i];
}
constinit const my_backend::kernel_function axpy_function{&axpy};
constinit const roster::kernel_entry axpy_entry =
    my_backend::kernel<roster::read_write<double>, roster::read<double>, roster::scalar<double>>(
        "my_axpy", "plain", roster::default_variant, &axpy_function);
ROSTER_KERNEL(axpy_entry);

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "myhost: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

template <class T>
void run_program(roster::device& dev, const char* type) {
  constexpr std::size_t n = 1000;
  auto a = dev.allocate<T>(n), b = dev.allocate<T>(n), c = dev.allocate<T>(n), r = dev.allocate<T>(1);
  if (!a || !b || !c || !r) return expect(false, std::string(type) + ": allocate");
  std::vector<T> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<T>(i % 7);
  expect(dev.upload<T>(*b, host).has_value(), std::string(type) + ": upload");

  // a = 2; c = b; a = c + a; b = 3 * c; a += b + 0.5 * c; then r = a . b
  roster::program p;
  p.fill(*a, 2.0).copy(*c, *b).grid_sync().add(*a, *c, *a).mul(*b, *c, 3.0).grid_sync();
  p.nstream(*a, *b, *c, 0.5).grid_sync().dot(*r, *a, *b);
  auto ok = dev.dispatch(p);
  expect(ok.has_value(), std::string(type) + ": dispatch: " + (ok ? "" : ok.error().message()));
  expect(dev.synchronize().has_value(), std::string(type) + ": synchronize");

  std::vector<T> got(n), sum(1);
  expect(dev.download<T>(*a, got).has_value() && dev.download<T>(*r, sum).has_value(),
         std::string(type) + ": download");
  double want_dot = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i % 7);
    const double want = (x + 2.0) + 3.0 * x + 0.5 * x;
    expect(got[i] == static_cast<T>(want), std::string(type) + ": a[" + std::to_string(i) + "]");
    want_dot += want * 3.0 * x;
  }
  expect(std::fabs(static_cast<double>(sum[0]) - want_dot) <= 1e-6 * want_dot, std::string(type) + ": dot");

  // triad writes its out buffer (a) from in1 (b) and in2 (c).
  roster::program t;
  t.triad(*a, *b, *c, 2.0);
  expect(dev.dispatch(t).has_value() && dev.download<T>(*a, got).has_value(), std::string(type) + ": triad");
  expect(got[5] == static_cast<T>(3.0 * 5 + 2.0 * 5), std::string(type) + ": triad a[5]");
  for (const auto& x : {*a, *b, *c, *r}) expect(dev.release(x).has_value(), std::string(type) + ": release");
}

// Calls the user's kernel between built-in steps: y = 1, then y += 2 x, then a
// built-in step reads what it wrote.
void run_user_kernel(roster::device& dev) {
  constexpr std::size_t n = 100;
  auto x = dev.allocate<double>(n), y = dev.allocate<double>(n), z = dev.allocate<double>(n);
  if (!x || !y || !z) return expect(false, "kernel: allocate");
  roster::program p;
  p.fill(*x, 3.0).fill(*y, 1.0).call("my_axpy", {*y, *x}, {2.0}).add(*z, *y, *x);
  auto ok = dev.dispatch(p);
  expect(ok.has_value(), "kernel: dispatch: " + (ok ? std::string() : ok.error().message()));
  std::vector<double> got(n);
  expect(dev.download<double>(*z, got).has_value(), "kernel: download");
  expect(got[0] == 10.0 && got[n - 1] == 10.0, "kernel: z = (1 + 2 * 3) + 3");
  for (const auto& b : {*x, *y, *z}) expect(dev.release(b).has_value(), "kernel: release");
}

}  // namespace

int main() {
  expect(roster::find_backend("myhost") != nullptr, "the registration was kept (link_whole or anchor)");

  auto dev = roster::acquire("myhost:0");
  if (!dev) {
    std::fprintf(stderr, "myhost: %s\n", dev.error().message().c_str());
    return 1;
  }
  run_program<double>(**dev, "double");
  run_user_kernel(**dev);
  run_program<float>(**dev, "float");
  expect(!roster::acquire("myhost:1").has_value(), "myhost:1 does not exist");

  // Type cpu: the adapter is one of the host CPU circuit's.
  bool in_host_circuit = false;
  if (auto all = roster::circuits())
    for (const roster::circuit& c : *all) {
      if (c.type() != roster::device_type::cpu) continue;
      in_host_circuit = c.adapter.backend == "myhost";
      for (const auto& alt : c.alternates) in_host_circuit = in_host_circuit || alt.backend == "myhost";
    }
  expect(in_host_circuit, "myhost:0 is in the host CPU's circuit");

  if (failures != 0) return 1;
  std::printf("myhost: ok\n");
  return 0;
}
