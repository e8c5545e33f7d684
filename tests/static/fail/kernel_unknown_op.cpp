// Must not compile: no kernel in the list has the op "saxpi".
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"saxpi">(device(), doubles(), doubles(), 2.0);
  return r ? 0 : 1;
}
