// Must not compile: the fake backend's device has no run_kernel for a CPU entry point.
#include "fake_backend.hpp"
#include "kernel_fixture.hpp"
using namespace roster_test;
using two = roster::static_registry<roster::cpu::backend, fake_backend<"gpu", 0>>;
using gpu_iota = roster::static_kernel<"iota", "gpu", "plain", roster::default_variant, &iota, roster::write<float>,
                                       roster::scalar<std::int32_t>>;
using list = roster::static_kernels<two, saxpy_k<double>, gpu_iota>;
int main() {
  auto r = list::call<"iota">(*static_cast<fake_device*>(nullptr), floats(), std::int32_t{1});
  return r ? 0 : 1;
}
