// Must not compile: saxpy has no variant "tiled".
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"saxpy", "tiled">(device(), doubles(), doubles(), 2.0);
  return r ? 0 : 1;
}
