// Must not compile: two variants of saxpy over double on the CPU are both the default.
#include "kernel_fixture.hpp"
using namespace roster_test;
using list = roster::static_kernels<backends, saxpy_k<double>, saxpy_k<double, "fast", roster::default_variant>>;
static_assert(list::size == 2);
int main() { return 0; }
