// Must not compile: iota is listed over float only; the call passes a double buffer first.
#include "kernel_fixture.hpp"
using namespace roster_test;
int main() {
  auto r = kernels::call<"iota">(device(), doubles(), std::int32_t{1});
  return r ? 0 : 1;
}
