// The CUDA user kernel of kernel_call_bench.cpp: y[i] = alpha * x[i], and its
// host launcher, compiled with nvcc.
#include <roster/backends/cuda.hpp>

#include <cuda_runtime.h>

namespace {
__global__ void scale(double* y, const double* x, double alpha, unsigned long long n) {
  const unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}
}  // namespace

void kernel_bench_scale_launch(const roster::kernel_args& a, void* stream) {
  const unsigned long long n = a.extent;
  scale<<<static_cast<unsigned>((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      a.data<double>(0), a.data<const double>(1), a.scalar<double>(0), n);
}
