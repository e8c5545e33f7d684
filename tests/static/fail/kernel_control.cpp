// Must compile: the calls the kernel snippets break, done right.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto y = doubles(), x = doubles();
  auto a = kernels::call<"saxpy">(device(), y, x, 2.0);
  auto b = kernels::call<"saxpy", "fast">(device(), y, x, 2.0);
  auto c = kernels::call<"saxpy">(device(), floats(), floats(), 2.0f);
  auto d = kernels::call<"iota">(device(), floats(), std::int32_t{3});
  auto e = kernels::call<"iota">(device(), floats(), 3u);
  return a && b && c && d && e ? 0 : 1;
}
