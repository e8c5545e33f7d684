#pragma once
// Private: the plain interface between the CUDA kernels (src/kernels.cu,
// built by nvcc into the committed fat image) and the host code that loads
// and launches them through the driver API. Only standard-layout types and
// constants cross it, so nvcc never sees a roster header, and the host
// compiler needs no CUDA header.

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

/// Arguments of the specialised element-wise and dot kernels (their first parameter).
struct stream_args {
  void* out;
  const void* in1;
  const void* in2;
  double scalar;
  std::uint64_t n;
};

/// Threads per block of every roster kernel but the fast path's.
inline constexpr int block_threads = 256;

/// Cache hints of the fast path's loads and stores.
enum hint : int {
  plain = 0,
  streaming = 1,  // ld/st .cs: evict first
  prefetch = 2,   // ld .L2::256B: fetch the whole 256-byte L2 sector group (sm_80 on; a plain load before)
};

// The fast path's kernel shapes, picked at open for tuning (ROSTER_CUDA_VARIANT).
// Persistent grids (the blocks resident at once, grid-stride): 0: 4 vectors
// per thread per iteration; 1: the same with the streaming cache policy;
// 2: 2 vectors; 3: 8 vectors. Full grids (one block per 256 x U vectors, as
// BabelStream sizes its grid): 4: U = 1; 5: U = 2; 6: U = 4;
// 7: U = 1 with the streaming policy; 8: U = 1 with 256-byte L2 prefetch;
// 9: U = 2, prefetch; 10: U = 1 in blocks of 1024 threads; 11: of 512;
// 12 (the default): 4 for fill, copy and mul, 10 for add, triad and nstream
// (measured best on the H200: bench/results/cuda.md).
inline constexpr int variant_count = 13;
inline constexpr int default_variant = 12;
/// Shapes with kernels of their own (the default mixes two of them).
inline constexpr int shape_count = 12;

// hint, vectors per thread per iteration, full grid, threads per block.
inline constexpr int hint_of[variant_count] = {plain,    streaming, plain,    plain, plain, plain, plain,
                                               streaming, prefetch, prefetch, plain, plain, plain};
inline constexpr int unroll_of[variant_count] = {4, 4, 2, 8, 1, 2, 4, 1, 1, 2, 1, 1, 1};
inline constexpr bool full_of[variant_count] = {false, false, false, false, true, true, true,
                                                true,  true,  true,  true,  true,  true};
inline constexpr int block_of[variant_count] = {256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 1024, 512, 256};

/// Returns the shape an op runs with under variant v: the mixed default (12)
/// gives add, triad and nstream (two or three inputs) 1024-thread blocks, which
/// measured up to 0.6% faster for them and 5% slower for copy and mul on the H200.
constexpr int shape_for(int op, int variant) noexcept {
  if (variant != default_variant) return variant >= 0 && variant < variant_count ? variant : 0;
  return op == k_add || op == k_triad || op == k_nstream ? 10 : 4;
}

/// Returns the threads per block of an op's fast-path kernel.
constexpr int stream_block(int op, int variant) noexcept { return block_of[shape_for(op, variant)]; }

/// Returns the grid of an op's fast-path kernel for n elements, given the blocks resident at once.
constexpr int stream_grid(int op, std::uint64_t n, bool f64, int resident, int variant) noexcept {
  const int v = shape_for(op, variant);
  const std::uint64_t vectors = n / (f64 ? 2 : 4) + 1;  // + 1: the scalar tail needs a block too
  const std::uint64_t per_block = std::uint64_t(block_of[v]) * unroll_of[v];
  const std::uint64_t need = (vectors + per_block - 1) / per_block;
  if (full_of[v]) return static_cast<int>(need < 0x7fffffffu ? need : 0x7fffffffu);
  return static_cast<int>(need < static_cast<std::uint64_t>(resident) ? need : resident);
}

// The kernels' names in the image (extern "C", so the host finds them with
// cuModuleGetFunction): roster_stream_<type>_<op>_s<shape> (stream_args),
// roster_dot_coop_<type>_h<hint> and roster_dot_partial_<type>_h<hint>
// (stream_args, double* partials), roster_dot_final_<type> (const double*
// partials, int count, void* r), roster_program_coop_<type> (kprogram) and
// roster_program_split_<type> (kprogram, int segment); <type> is f32 or f64.
inline constexpr const char* op_names[kop_count] = {"fill", "copy", "mul", "add", "triad", "nstream", "dot"};

}  // namespace roster::cuda::detail
