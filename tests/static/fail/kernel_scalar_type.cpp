// Must not compile: saxpy's scalar is a double; an integer is passed.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"saxpy">(device(), doubles(), doubles(), 2);
  return r ? 0 : 1;
}
