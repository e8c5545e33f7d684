// Must not compile: saxpy takes two buffers and a scalar; the call leaves the scalar out.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"saxpy">(device(), doubles(), doubles());
  return r ? 0 : 1;
}
