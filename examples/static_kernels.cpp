// Kernels in the compile-time registry, as docs/static-registry.md shows
// them: a kernel list checked as it compiles, called on the CPU device with
// no lookup and no virtual call, and the same kernel through a program.
// Needs Boost.Hana.
#include <roster/backends/cpu.hpp>
#include <roster/static_kernels.hpp>

#include <cstdio>
#include <vector>

template <class T>
void axpy(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  const T alpha = a.scalar<T>(0);
  for (std::size_t i = begin; i < end; ++i) y[i] += alpha * x[i];
}

template <class T>
using axpy_kernel = roster::static_kernel<"axpy", "cpu", "plain", roster::default_variant, &axpy<T>,
                                          roster::read_write<T>, roster::read<T>, roster::scalar<T>>;

using backends = roster::static_registry<roster::cpu::backend>;
using kernels = roster::static_kernels<backends, axpy_kernel<double>, axpy_kernel<float>>;

ROSTER_REGISTER_STATIC_KERNEL(axpy_kernel<double>);  // program::call finds it too

int run() {
  auto dev = backends::open<"cpu">();                   // expected<unique_ptr<cpu::device>>
  if (!dev) { std::puts(dev.error().message().c_str()); return 1; }
  auto y = roster::allocate_typed<double>(**dev, 1000);  // typed_buffer<double>
  auto x = roster::allocate_typed<double>(**dev, 1000);
  if (!y || !x) return 1;
  roster::program fill;
  fill.fill(*y, 1.0).fill(*x, 2.0);
  if (!roster::dispatch_static(**dev, fill)) return 1;
  // y += 3 x, checked as it compiles: op, arity, element and scalar types.
  if (auto ok = kernels::call<"axpy">(**dev, *y, *x, 3.0); !ok) {
    std::puts(ok.error().message().c_str());
    return 1;
  }
  // kernels::call<"axpy">(**dev, *y, *x);     // does not compile: the number of arguments differs
  // kernels::call<"axpy">(**dev, *y, *x, 3);  // does not compile: a double parameter takes 2.0, not 2
  roster::program p;
  p.call("axpy", {*y, *x}, {1.0});                      // the same kernel, through the inventory
  if (!(*dev)->dispatch(p)) return 1;
  std::vector<double> out(1000);
  if (!(*dev)->download(*y, std::span<double>(out))) return 1;
  std::printf("y[0] = %g\n", out[0]);                   // 1 + 3*2 + 1*2 = 9
  return out[0] == 9.0 && out[999] == 9.0 ? 0 : 1;
}

int main() { return run(); }
