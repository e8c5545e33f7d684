// Compiled by nvcc in the static-nvcc-headers test: roster's CUDA-facing
// headers must build as CUDA C++20 and pull in no Boost.Hana.
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>
#include <roster/inventory.hpp>
#include <roster/backend.hpp>
#include <roster/acquire.hpp>

#if defined(BOOST_HANA_CONFIG_HPP)
#  error "Boost.Hana reached a header that a .cu file includes"
#endif

__global__ void roster_nvcc_probe(double* out, int n) {
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = static_cast<double>(i);
}

int roster_nvcc_host() {
  roster::program p;
  roster::op_set s = roster::op_set::of({roster::op::fill, roster::op::dot});
  return static_cast<int>(p.empty()) + static_cast<int>(s.contains(roster::op::dot)) +
         static_cast<int>(roster::backend<int>);
}
