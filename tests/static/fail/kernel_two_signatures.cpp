// Must not compile: a second variant of saxpy over double takes a float scalar.
#include "kernel_fixture.hpp"
using namespace roster_test;
using odd = roster::static_kernel<"saxpy", "cpu", "odd", roster::other_variant, &saxpy<double>,
                                  roster::read_write<double>, roster::read<double>, roster::scalar<float>>;
using list = roster::static_kernels<backends, saxpy_k<double>, odd>;
static_assert(list::size == 2);
int main() { return 0; }
