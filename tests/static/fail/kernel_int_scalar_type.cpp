// Must not compile: iota's scalar is an int32; a double is passed.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"iota">(device(), floats(), 1.5);
  return r ? 0 : 1;
}
