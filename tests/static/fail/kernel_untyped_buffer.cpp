// Must not compile: a buffer parameter takes a roster::typed_buffer, not a plain roster::buffer.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  roster::buffer x = doubles();
  auto r = kernels::call<"saxpy">(device(), doubles(), x, 2.0);
  return r ? 0 : 1;
}
