// Must not compile: saxpy over double reads a double buffer; a float one is passed.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"saxpy">(device(), doubles(), floats(), 2.0);
  return r ? 0 : 1;
}
