// Must not compile: saxpy over double has two variants, neither the default, and the call names none.
#include "kernel_fixture.hpp"
using namespace roster_test;
using list = roster::static_kernels<backends, saxpy_k<double, "a", roster::other_variant>,
                                    saxpy_k<double, "b", roster::other_variant>>;
int main() {
  auto r = list::call<"saxpy">(device(), doubles(), doubles(), 2.0);
  return r ? 0 : 1;
}
