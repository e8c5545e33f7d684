// Must not compile: two kernels share op saxpy, backend cpu, type double and variant "plain".
#include "kernel_fixture.hpp"
using namespace roster_test;
using twice = roster::static_kernels<backends, saxpy_k<double>, saxpy_k<float>,
                                     saxpy_k<double, "plain", roster::other_variant>>;
static_assert(twice::size == 3);
int main() { return 0; }
