// Must not compile: a kernel's first parameter is a buffer; the call passes a number first.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"saxpy">(device(), 2.0, doubles(), 2.0);
  return r ? 0 : 1;
}
