// Must not compile: a kernel for backend "cuda" in a list over a registry of the CPU backend only.
#include "kernel_fixture.hpp"
using namespace roster_test;
using cuda_saxpy = roster::static_kernel<"saxpy", "cuda", "plain", roster::default_variant, 0,
                                         roster::read_write<double>, roster::read<double>, roster::scalar<double>>;
using list = roster::static_kernels<backends, saxpy_k<double>, cuda_saxpy>;
static_assert(list::size == 2);
int main() { return 0; }
