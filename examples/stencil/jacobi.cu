// The stencil example's CUDA variants, compiled with nvcc: "plain", one
// thread per point on a 2-D grid, and "tiled", which stages a 32x8 tile and
// its halo in shared memory so each input is read from memory once per
// block. Each launcher runs on roster's stream and returns at once.
#include <roster/backends/cuda.hpp>

#include <cuda_runtime.h>

namespace {

template <class T>
__device__ T mean4(T w, T e, T s, T n) {
  return T(0.25) * ((w + e) + (s + n));
}

template <class T>
__global__ void jacobi_plain(T* out, const T* in, unsigned nx, unsigned ny) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const size_t k = static_cast<size_t>(j) * nx + i;
  if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
    out[k] = in[k];
    return;
  }
  out[k] = mean4(in[k - 1], in[k + 1], in[k - nx], in[k + nx]);
}

constexpr unsigned tile_x = 32, tile_y = 8;

template <class T>
__global__ void jacobi_tiled(T* out, const T* in, unsigned nx, unsigned ny) {
  __shared__ T tile[tile_y + 2][tile_x + 2];
  const unsigned i = blockIdx.x * tile_x + threadIdx.x, j = blockIdx.y * tile_y + threadIdx.y;
  const unsigned ti = threadIdx.x + 1, tj = threadIdx.y + 1;
  auto at = [&](unsigned x, unsigned y) { return in[static_cast<size_t>(y) * nx + x]; };
  const bool inside = i < nx && j < ny;
  if (inside) {
    tile[tj][ti] = at(i, j);
    if (threadIdx.x == 0 && i > 0) tile[tj][0] = at(i - 1, j);
    if (threadIdx.x == tile_x - 1 && i + 1 < nx) tile[tj][tile_x + 1] = at(i + 1, j);
    if (threadIdx.y == 0 && j > 0) tile[0][ti] = at(i, j - 1);
    if (threadIdx.y == tile_y - 1 && j + 1 < ny) tile[tile_y + 1][ti] = at(i, j + 1);
  }
  __syncthreads();
  if (!inside) return;
  const size_t k = static_cast<size_t>(j) * nx + i;
  if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
    out[k] = tile[tj][ti];
    return;
  }
  // A thread at the tile's right or bottom edge whose neighbour lies past
  // the grid never gets here: it is a boundary point.
  out[k] = mean4(tile[tj][ti - 1], tile[tj][ti + 1], tile[tj - 1][ti], tile[tj + 1][ti]);
}

template <class T>
void launch_plain(const roster::kernel_args& a, void* stream) {
  const unsigned nx = a.scalar<unsigned>(0), ny = a.scalar<unsigned>(1);
  const dim3 block(32, 8), grid((nx + 31) / 32, (ny + 7) / 8);
  jacobi_plain<T><<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a.data<T>(0), a.data<const T>(1), nx, ny);
}

template <class T>
void launch_tiled(const roster::kernel_args& a, void* stream) {
  const unsigned nx = a.scalar<unsigned>(0), ny = a.scalar<unsigned>(1);
  const dim3 block(tile_x, tile_y), grid((nx + tile_x - 1) / tile_x, (ny + tile_y - 1) / tile_y);
  jacobi_tiled<T><<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a.data<T>(0), a.data<const T>(1), nx, ny);
}

// roster:: spelled out: unqualified, read and write would also name POSIX's.
constinit const roster::kernel_entry plain_f64 =
    roster::cuda::kernel<&launch_plain<double>, roster::write<double>, roster::read<double>,
                         roster::scalar<std::uint32_t>, roster::scalar<std::uint32_t>>("jacobi", "plain",
                                                                                        roster::default_variant);
constinit const roster::kernel_entry tiled_f64 =
    roster::cuda::kernel<&launch_tiled<double>, roster::write<double>, roster::read<double>,
                         roster::scalar<std::uint32_t>, roster::scalar<std::uint32_t>>("jacobi", "tiled",
                                                                                        roster::other_variant);

}  // namespace

ROSTER_KERNEL(plain_f64);
ROSTER_KERNEL(tiled_f64);
