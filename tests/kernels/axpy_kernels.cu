// User CUDA kernels for tests/kernels/cuda_kernels_test.cpp, compiled with
// nvcc: two variants of axpy (plain, and one that reads two elements per
// thread) and their host launchers, registered here with ROSTER_KERNEL.
#include <roster/backends/cuda.hpp>

#include <cuda_runtime.h>

namespace {

template <class T>
__global__ void axpy_plain(T* y, const T* x, T alpha, unsigned long long n) {
  const unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += alpha * x[i];
}

template <class T>
__global__ void axpy_pairs(T* y, const T* x, T alpha, unsigned long long n) {
  const unsigned long long i = 2 * (blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x);
  if (i < n) y[i] += alpha * x[i];
  if (i + 1 < n) y[i + 1] += alpha * x[i + 1];
}

template <class T>
void launch_plain(const roster::kernel_args& a, void* stream) {
  const unsigned long long n = a.extent;
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  axpy_plain<T><<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(a.data<T>(0), a.data<const T>(1),
                                                                         a.scalar<T>(0), n);
}

template <class T>
void launch_pairs(const roster::kernel_args& a, void* stream) {
  const unsigned long long n = a.extent;
  const unsigned blocks = static_cast<unsigned>((n + 511) / 512);
  axpy_pairs<T><<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(a.data<T>(0), a.data<const T>(1),
                                                                         a.scalar<T>(0), n);
}

// A launcher that fails: a block of 4096 threads is beyond every CUDA device.
void launch_broken(const roster::kernel_args& a, void* stream) {
  axpy_plain<double><<<1, 4096, 0, static_cast<cudaStream_t>(stream)>>>(a.data<double>(0), a.data<const double>(1),
                                                                         a.scalar<double>(0), a.extent);
}

constinit const roster::kernel_entry axpy_plain_f64 =
    roster::cuda::kernel<&launch_plain<double>, roster::read_write<double>, roster::read<double>, roster::scalar<double>>("axpy", "plain", roster::default_variant);
constinit const roster::kernel_entry axpy_pairs_f64 =
    roster::cuda::kernel<&launch_pairs<double>, roster::read_write<double>, roster::read<double>, roster::scalar<double>>("axpy", "pairs", roster::other_variant);
constinit const roster::kernel_entry axpy_plain_f32 =
    roster::cuda::kernel<&launch_plain<float>, roster::read_write<float>, roster::read<float>, roster::scalar<float>>("axpy", "plain", roster::default_variant);
constinit const roster::kernel_entry axpy_broken_f64 =
    roster::cuda::kernel<&launch_broken, roster::read_write<double>, roster::read<double>, roster::scalar<double>>("axpy", "broken", roster::other_variant);

}  // namespace

ROSTER_KERNEL(axpy_plain_f64);
ROSTER_KERNEL(axpy_pairs_f64);
ROSTER_KERNEL(axpy_plain_f32);
ROSTER_KERNEL(axpy_broken_f64);
