#pragma once
// Private: the plain interface between the CUDA kernels (kernels.cu, built by
// nvcc) and the device class (device.cpp, built by the C++ compiler). Only
// standard-layout types and the CUDA runtime's own types cross it, so nvcc
// never sees a roster header.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace roster::cuda::detail {

/// Kernel-side op codes, in roster::op's order (grid_sync never reaches a kernel).
enum kop : std::uint8_t { k_fill, k_copy, k_mul, k_add, k_triad, k_nstream, k_dot };
inline constexpr int kop_count = 7;

/// One step as a kernel sees it.
struct kstep {
  void* out;
  const void* in1;
  const void* in2;
  double scalar;
  std::uint8_t op;
  std::uint8_t pad[7];
};

/// A run of steps over buffers of one length, fused into one pass; at most one dot, last.
struct ksegment {
  std::uint64_t n;         ///< elements of the element-wise steps (dot: of its inputs)
  std::uint16_t first;     ///< first step
  std::uint16_t count;     ///< number of steps
  std::int16_t dot;        ///< index of the dot step, or -1
  std::uint16_t pad;
};

/// Steps and segments a single launch carries as its parameter (under 4 KB).
inline constexpr int max_launch_steps = 64;
inline constexpr int max_launch_segments = 32;

/// One launch's worth of a program.
struct kprogram {
  kstep steps[max_launch_steps];
  ksegment segments[max_launch_segments];
  double* partials;  ///< scratch: one double per block
  std::int32_t nsegments;
  std::int32_t pad;
};
static_assert(sizeof(kprogram) <= 4096, "kprogram must fit the classic 4 KB parameter limit");

/// Threads per block of every roster kernel.
inline constexpr int block_threads = 256;

/// Kernels whose occupancy the device class asks for.
enum class kernel_id : std::uint8_t { program_coop, program_split, dot_coop, dot_partial, stream };

/// The fast path's kernel shapes (kernels.cu lists them): 0 to variant_count - 1,
/// default_variant when ROSTER_CUDA_VARIANT is unset.
inline constexpr int variant_count = 13;
inline constexpr int default_variant = 12;

/// Picks the fast path's kernel shapes (a value out of range picks the default); for tuning only.
void set_variant(int v) noexcept;
/// Returns the threads per block of an op's fast-path kernel.
int stream_block(kop op) noexcept;
/// Returns the grid of an op's fast-path kernel for n elements, given the blocks resident at once.
int stream_grid(kop op, std::uint64_t n, bool f64, int resident) noexcept;

/// Returns the resident blocks per multiprocessor of a kernel, or a negative CUDA error.
int blocks_per_sm(kernel_id k, bool f64, int* out) noexcept;

/// Returns the resident blocks per multiprocessor of the fast-path kernel of an op, or a CUDA error.
int stream_blocks_per_sm(kop op, bool f64, int* out) noexcept;

/// Runs a whole kprogram as one cooperative launch with grid-wide sync between segments.
cudaError_t launch_program_coop(const kprogram& p, bool f64, int grid, cudaStream_t s) noexcept;
/// Runs segment `seg` of a kprogram as plain launches: the fused pass, then (for a dot) the final sum.
cudaError_t launch_segment_split(const kprogram& p, int seg, bool f64, int grid, cudaStream_t s) noexcept;
/// Runs one element-wise step with its specialised kernel (the single-op fast path).
cudaError_t launch_stream(const kstep& st, std::uint64_t n, bool f64, int grid, cudaStream_t s) noexcept;
/// Runs one dot as one cooperative launch: block partials, grid sync, final sum by block 0.
cudaError_t launch_dot_coop(const kstep& st, std::uint64_t n, bool f64, double* partials, int grid,
                            cudaStream_t s) noexcept;
/// Runs one dot as two plain launches: block partials, then the final sum.
cudaError_t launch_dot_split(const kstep& st, std::uint64_t n, bool f64, double* partials, int grid,
                             cudaStream_t s) noexcept;

/// Arguments of the specialised element-wise kernel, for a bare cudaLaunchKernel.
struct stream_args {
  void* out;
  const void* in1;
  const void* in2;
  double scalar;
  std::uint64_t n;
};
/// Returns the specialised element-wise kernel for an op, as cudaLaunchKernel takes it
/// (its single parameter is a stream_args), or null for dot.
const void* stream_kernel(kop op, bool f64) noexcept;

}  // namespace roster::cuda::detail
