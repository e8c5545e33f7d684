// The CUDA kernels of the STREAM ops, for the H200 first: 16-byte loads with
// a scalar tail, several independent loads in flight per thread, grids sized
// from the multiprocessor count, and one cooperative launch per program with
// grid-wide sync between segments.

#include "kernels.hpp"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

namespace roster::cuda::detail {
namespace {

// A 16-byte vector of T, indexed only with compile-time constants.
template <class T>
struct pack {
  static constexpr int width = 16 / sizeof(T);
  T v[width];
};

// Cache hints for the fast path's loads and stores.
enum hint : int {
  plain = 0,
  streaming = 1,  // ld/st .cs: evict first
  prefetch = 2,   // ld .L2::256B: fetch the whole 256-byte L2 sector group (sm_80 on; a plain load before)
};

// The L2 prefetch qualifier exists from sm_80 (Ampere); code for older
// targets (Turing's SASS, the compute_75 PTX that newer cards JIT) loads plainly.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#  define ROSTER_CUDA_L2_PREFETCH 1
#else
#  define ROSTER_CUDA_L2_PREFETCH 0
#endif

// Loads vector i of p with a cache hint H.
template <class T, int H>
__device__ __forceinline__ pack<T> load(const void* p, std::size_t i) {
  pack<T> r;
  if constexpr (sizeof(T) == 4) {
    const float4* q = static_cast<const float4*>(p) + i;
    float4 x;
    if constexpr (H == streaming) x = __ldcs(q);
    else if constexpr (H == prefetch && ROSTER_CUDA_L2_PREFETCH)
      asm volatile("ld.global.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w) : "l"(q));
    else x = *q;
    r.v[0] = x.x, r.v[1] = x.y, r.v[2] = x.z, r.v[3] = x.w;
  } else {
    const double2* q = static_cast<const double2*>(p) + i;
    double2 x;
    if constexpr (H == streaming) x = __ldcs(q);
    else if constexpr (H == prefetch && ROSTER_CUDA_L2_PREFETCH)
      asm volatile("ld.global.L2::256B.v2.f64 {%0, %1}, [%2];" : "=d"(x.x), "=d"(x.y) : "l"(q));
    else x = *q;
    r.v[0] = x.x, r.v[1] = x.y;
  }
  return r;
}

template <class T, int H>
__device__ __forceinline__ void store(void* p, std::size_t i, const pack<T>& r) {
  if constexpr (sizeof(T) == 4) {
    float4* q = static_cast<float4*>(p) + i;
    float4 x = make_float4(r.v[0], r.v[1], r.v[2], r.v[3]);
    if (H == streaming) __stcs(q, x); else *q = x;
  } else {
    double2* q = static_cast<double2*>(p) + i;
    double2 x = make_double2(r.v[0], r.v[1]);
    if (H == streaming) __stcs(q, x); else *q = x;
  }
}

__host__ __device__ constexpr bool reads_in1(int op) { return op != k_fill; }
__host__ __device__ constexpr bool reads_in2(int op) { return op == k_add || op == k_triad || op == k_nstream || op == k_dot; }

// The element-wise effect of an op on one element (DESIGN.md's table).
template <int OP, class T>
__device__ __forceinline__ T apply(T out, T a, T b, T s) {
  if constexpr (OP == k_fill) return s;
  else if constexpr (OP == k_copy) return a;
  else if constexpr (OP == k_mul) return s * a;
  else if constexpr (OP == k_add) return a + b;
  else if constexpr (OP == k_triad) return a + s * b;
  else return out + a + s * b;  // nstream
}

// Sums v over the block; the result is valid in thread 0. Safe to call repeatedly.
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[block_threads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < block_threads / 32 ? warp_sums[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  __syncthreads();  // warp_sums may be reused by the next call
  return v;
}

// Sums partials[0, count) with one block and stores the result in r[0].
template <class T>
__device__ __forceinline__ void final_sum(const double* partials, int count, void* r) {
  double v = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) v += partials[i];
  v = block_sum(v);
  if (threadIdx.x == 0) static_cast<T*>(r)[0] = static_cast<T>(v);
}

// ---- the single-op fast path -------------------------------------------------

// One element-wise op over n elements: U vectors per thread per iteration,
// all loaded before any is used, grid-stride over the rest.
template <class T, int OP, int CS, int U, int BT>
__global__ void __launch_bounds__(BT) stream_k(stream_args a) {
  constexpr int W = pack<T>::width;
  const T s = static_cast<T>(a.scalar);
  const std::size_t nvec = a.n / W;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x * U;
  for (std::size_t base = std::size_t(blockIdx.x) * blockDim.x * U + threadIdx.x; base < nvec; base += stride) {
    pack<T> x[U], y[U], o[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::size_t i = base + std::size_t(k) * blockDim.x;
      if (i < nvec) {
        if constexpr (reads_in1(OP)) x[k] = load<T, CS>(a.in1, i);
        if constexpr (reads_in2(OP)) y[k] = load<T, CS>(a.in2, i);
        if constexpr (OP == k_nstream) o[k] = load<T, CS>(a.out, i);
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::size_t i = base + std::size_t(k) * blockDim.x;
      if (i < nvec) {
        pack<T> r;
#pragma unroll
        for (int e = 0; e < W; ++e) r.v[e] = apply<OP>(o[k].v[e], x[k].v[e], y[k].v[e], s);
        store<T, CS>(a.out, i, r);
      }
    }
  }
  // The scalar tail: fewer than W elements.
  const std::size_t t = nvec * W + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < a.n) {
    T* out = static_cast<T*>(a.out);
    const T* in1 = static_cast<const T*>(a.in1);
    const T* in2 = static_cast<const T*>(a.in2);
    out[t] = apply<OP>(OP == k_nstream ? out[t] : T(0), reads_in1(OP) ? in1[t] : T(0),
                       reads_in2(OP) ? in2[t] : T(0), s);
  }
}

// This thread's share of sum(a[i] * b[i]), in double.
template <class T, int CS, int U>
__device__ __forceinline__ double dot_share(const void* pa, const void* pb, std::size_t n) {
  constexpr int W = pack<T>::width;
  const std::size_t nvec = n / W;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x * U;
  double acc[U] = {};
  for (std::size_t base = std::size_t(blockIdx.x) * blockDim.x * U + threadIdx.x; base < nvec; base += stride) {
    pack<T> x[U], y[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const std::size_t i = base + std::size_t(k) * blockDim.x;
      if (i < nvec) {
        x[k] = load<T, CS>(pa, i);
        y[k] = load<T, CS>(pb, i);
      } else {
        for (int e = 0; e < W; ++e) x[k].v[e] = T(0), y[k].v[e] = T(0);
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k)
#pragma unroll
      for (int e = 0; e < W; ++e) acc[k] += static_cast<double>(x[k].v[e] * y[k].v[e]);
  }
  double sum = 0.0;
#pragma unroll
  for (int k = 0; k < U; ++k) sum += acc[k];
  const std::size_t t = nvec * W + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) sum += static_cast<double>(static_cast<const T*>(pa)[t] * static_cast<const T*>(pb)[t]);
  return sum;
}

template <class T, int CS>
__global__ void __launch_bounds__(block_threads) dot_coop_k(stream_args a, double* partials) {
  const double b = block_sum(dot_share<T, CS, 4>(a.in1, a.in2, a.n));
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
  cg::this_grid().sync();
  if (blockIdx.x == 0) final_sum<T>(partials, gridDim.x, a.out);
}

template <class T, int CS>
__global__ void __launch_bounds__(block_threads) dot_partial_k(stream_args a, double* partials) {
  const double b = block_sum(dot_share<T, CS, 4>(a.in1, a.in2, a.n));
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
}

template <class T>
__global__ void __launch_bounds__(block_threads) dot_final_k(const double* partials, int count, void* r) {
  final_sum<T>(partials, count, r);
}

// ---- the program interpreter ---------------------------------------------------

// Applies step st to two vectors (i0 always, i1 when has1) and, for a dot, adds to acc.
template <class T>
__device__ __forceinline__ void step_vec(const kstep& st, T s, std::size_t i0, std::size_t i1, bool has1,
                                         double& acc) {
  const int op = st.op;
  pack<T> x0{}, x1{}, y0{}, y1{}, o0{}, o1{};
  if (op != k_fill) {
    x0 = load<T, plain>(st.in1, i0);
    if (has1) x1 = load<T, plain>(st.in1, i1);
  }
  if (op == k_add || op == k_triad || op == k_nstream || op == k_dot) {
    y0 = load<T, plain>(st.in2, i0);
    if (has1) y1 = load<T, plain>(st.in2, i1);
  }
  if (op == k_nstream) {
    o0 = load<T, plain>(st.out, i0);
    if (has1) o1 = load<T, plain>(st.out, i1);
  }
  constexpr int W = pack<T>::width;
  pack<T> r0, r1;
  switch (op) {
#define ROSTER_IMPL_CASE(OP)                                                     \
  case OP:                                                                       \
    _Pragma("unroll") for (int e = 0; e < W; ++e) {                              \
      r0.v[e] = apply<OP>(o0.v[e], x0.v[e], y0.v[e], s);                         \
      r1.v[e] = apply<OP>(o1.v[e], x1.v[e], y1.v[e], s);                         \
    }                                                                            \
    break;
    ROSTER_IMPL_CASE(k_fill)
    ROSTER_IMPL_CASE(k_copy)
    ROSTER_IMPL_CASE(k_mul)
    ROSTER_IMPL_CASE(k_add)
    ROSTER_IMPL_CASE(k_triad)
    ROSTER_IMPL_CASE(k_nstream)
#undef ROSTER_IMPL_CASE
    default:  // dot
#pragma unroll
      for (int e = 0; e < W; ++e)
        acc += static_cast<double>(x0.v[e] * y0.v[e]) + static_cast<double>(x1.v[e] * y1.v[e]);
      return;
  }
  store<T, plain>(st.out, i0, r0);
  if (has1) store<T, plain>(st.out, i1, r1);
}

template <class T>
__device__ __forceinline__ void step_scalar(const kstep& st, std::size_t i, double& acc) {
  const T* in1 = static_cast<const T*>(st.in1);
  const T* in2 = static_cast<const T*>(st.in2);
  T* out = static_cast<T*>(st.out);
  const T s = static_cast<T>(st.scalar);
  switch (st.op) {
    case k_fill: out[i] = s; break;
    case k_copy: out[i] = in1[i]; break;
    case k_mul: out[i] = s * in1[i]; break;
    case k_add: out[i] = in1[i] + in2[i]; break;
    case k_triad: out[i] = in1[i] + s * in2[i]; break;
    case k_nstream: out[i] += in1[i] + s * in2[i]; break;
    default: acc += static_cast<double>(in1[i] * in2[i]); break;
  }
}

// One fused pass over a segment: every step for each element, in order; returns
// this thread's dot share (0 when the segment holds no dot).
template <class T>
__device__ __forceinline__ double run_segment(const kprogram& p, const ksegment& sg) {
  constexpr int W = pack<T>::width;
  const std::size_t nvec = sg.n / W;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x * 2;
  double acc = 0.0;
  for (std::size_t i0 = std::size_t(blockIdx.x) * blockDim.x * 2 + threadIdx.x; i0 < nvec; i0 += stride) {
    const std::size_t i1 = i0 + blockDim.x;
    const bool has1 = i1 < nvec;
    for (int k = sg.first; k < sg.first + sg.count; ++k) {
      const kstep& st = p.steps[k];
      step_vec<T>(st, static_cast<T>(st.scalar), i0, has1 ? i1 : i0, has1, acc);
    }
  }
  const std::size_t t = nvec * W + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < sg.n)
    for (int k = sg.first; k < sg.first + sg.count; ++k) step_scalar<T>(p.steps[k], t, acc);
  return acc;
}

template <class T>
__global__ void __launch_bounds__(block_threads) program_coop_k(const __grid_constant__ kprogram p) {
  cg::grid_group grid = cg::this_grid();
  for (int g = 0; g < p.nsegments; ++g) {
    const ksegment& sg = p.segments[g];
    const double acc = run_segment<T>(p, sg);
    if (sg.dot >= 0) {
      const double b = block_sum(acc);
      if (threadIdx.x == 0) p.partials[blockIdx.x] = b;
      grid.sync();
      if (blockIdx.x == 0) final_sum<T>(p.partials, gridDim.x, p.steps[sg.dot].out);
    }
    if (g + 1 < p.nsegments) grid.sync();
  }
}

template <class T>
__global__ void __launch_bounds__(block_threads) program_split_k(const __grid_constant__ kprogram p, int g) {
  const ksegment& sg = p.segments[g];
  const double acc = run_segment<T>(p, sg);
  if (sg.dot >= 0) {
    const double b = block_sum(acc);
    if (threadIdx.x == 0) p.partials[blockIdx.x] = b;
  }
}

// ---- launch helpers --------------------------------------------------------------

// The fast path's shapes, picked at run time for tuning (ROSTER_CUDA_VARIANT).
// Persistent grids (the blocks resident at once, grid-stride): 0: 4 vectors
// per thread per iteration; 1: the same with the streaming cache policy;
// 2: 2 vectors; 3: 8 vectors. Full grids (one block per 256 x U vectors, as
// BabelStream sizes its grid): 4: U = 1; 5: U = 2; 6: U = 4;
// 7: U = 1 with the streaming policy; 8: U = 1 with 256-byte L2 prefetch;
// 9: U = 2, prefetch; 10: U = 1 in blocks of 1024 threads; 11: of 512;
// 12 (the default): 4 for fill, copy and mul, 10 for add, triad and nstream.
int g_variant = default_variant;  // measured best on the H200 (bench/results/cuda.md)

// hint, vectors per thread per iteration, full grid.
// hint, vectors per thread per iteration, full grid, threads per block.
// (12 is 4 for one-input ops and 10 for two-input ops: see shape_for.)
constexpr int hint_of[variant_count] = {plain,    streaming, plain, plain, plain, plain, plain,
                                        streaming, prefetch, prefetch, plain, plain, plain};
constexpr int unroll_of[variant_count] = {4, 4, 2, 8, 1, 2, 4, 1, 1, 2, 1, 1, 1};
constexpr bool full_of[variant_count] = {false, false, false, false, true, true, true,
                                         true,  true,  true,  true,  true,  true};
constexpr int block_of[variant_count] = {256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 1024, 512, 256};

// The shape an op runs with: the mixed default (12) gives add, triad and
// nstream (two or three inputs) 1024-thread blocks, which measured up to
// 0.6% faster for them and 5% slower for copy and mul on the H200.
int shape_for(int op) {
  if (g_variant != default_variant) return g_variant;
  return op == k_add || op == k_triad || op == k_nstream ? 10 : 4;
}

template <class T, int V>
const void* stream_kernel_v(int op) {
  constexpr int cs = hint_of[V];
  constexpr int u = unroll_of[V];
  constexpr int bt = block_of[V];
  switch (op) {
    case k_fill: return reinterpret_cast<const void*>(&stream_k<T, k_fill, cs, u, bt>);
    case k_copy: return reinterpret_cast<const void*>(&stream_k<T, k_copy, cs, u, bt>);
    case k_mul: return reinterpret_cast<const void*>(&stream_k<T, k_mul, cs, u, bt>);
    case k_add: return reinterpret_cast<const void*>(&stream_k<T, k_add, cs, u, bt>);
    case k_triad: return reinterpret_cast<const void*>(&stream_k<T, k_triad, cs, u, bt>);
    case k_nstream: return reinterpret_cast<const void*>(&stream_k<T, k_nstream, cs, u, bt>);
    default: return nullptr;
  }
}

template <class T>
const void* stream_kernel_of(int op) {
  switch (shape_for(op)) {
    case 1: return stream_kernel_v<T, 1>(op);
    case 2: return stream_kernel_v<T, 2>(op);
    case 3: return stream_kernel_v<T, 3>(op);
    case 4: return stream_kernel_v<T, 4>(op);
    case 5: return stream_kernel_v<T, 5>(op);
    case 6: return stream_kernel_v<T, 6>(op);
    case 7: return stream_kernel_v<T, 7>(op);
    case 8: return stream_kernel_v<T, 8>(op);
    case 9: return stream_kernel_v<T, 9>(op);
    case 10: return stream_kernel_v<T, 10>(op);
    case 11: return stream_kernel_v<T, 11>(op);
    default: return stream_kernel_v<T, 0>(op);
  }
}

template <class T, int H>
const void* dot_kernel_h(bool coop) {
  return coop ? reinterpret_cast<const void*>(&dot_coop_k<T, H>) : reinterpret_cast<const void*>(&dot_partial_k<T, H>);
}

template <class T>
const void* dot_kernel_of(bool coop) {
  switch (hint_of[shape_for(k_dot)]) {
    case streaming: return dot_kernel_h<T, streaming>(coop);
    case prefetch: return dot_kernel_h<T, prefetch>(coop);
    default: return dot_kernel_h<T, plain>(coop);
  }
}

const void* kernel_of(kernel_id k, bool f64) {
  switch (k) {
    case kernel_id::program_coop:
      return f64 ? reinterpret_cast<const void*>(&program_coop_k<double>)
                 : reinterpret_cast<const void*>(&program_coop_k<float>);
    case kernel_id::program_split:
      return f64 ? reinterpret_cast<const void*>(&program_split_k<double>)
                 : reinterpret_cast<const void*>(&program_split_k<float>);
    case kernel_id::dot_coop: return f64 ? dot_kernel_of<double>(true) : dot_kernel_of<float>(true);
    case kernel_id::dot_partial: return f64 ? dot_kernel_of<double>(false) : dot_kernel_of<float>(false);
    case kernel_id::stream:
      return f64 ? stream_kernel_of<double>(k_triad) : stream_kernel_of<float>(k_triad);
  }
  return nullptr;
}

}  // namespace

void set_variant(int v) noexcept { g_variant = v >= 0 && v < variant_count ? v : default_variant; }

int stream_block(kop op) noexcept { return block_of[shape_for(op)]; }

int stream_grid(kop op, std::uint64_t n, bool f64, int resident) noexcept {
  const int v = shape_for(op);
  const std::uint64_t vectors = n / (f64 ? 2 : 4) + 1;  // + 1: the scalar tail needs a block too
  const std::uint64_t per_block = std::uint64_t(block_of[v]) * unroll_of[v];
  const std::uint64_t need = (vectors + per_block - 1) / per_block;
  if (full_of[v]) return static_cast<int>(need < 0x7fffffffu ? need : 0x7fffffffu);
  return static_cast<int>(need < static_cast<std::uint64_t>(resident) ? need : resident);
}

int blocks_per_sm(kernel_id k, bool f64, int* out) noexcept {
  return static_cast<int>(cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, kernel_of(k, f64), block_threads, 0));
}

int stream_blocks_per_sm(kop op, bool f64, int* out) noexcept {
  const void* k = f64 ? stream_kernel_of<double>(op) : stream_kernel_of<float>(op);
  return static_cast<int>(cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, k, block_of[shape_for(op)], 0));
}

const void* stream_kernel(kop op, bool f64) noexcept {
  return f64 ? stream_kernel_of<double>(op) : stream_kernel_of<float>(op);
}

cudaError_t launch_stream(const kstep& st, std::uint64_t n, bool f64, int grid, cudaStream_t s) noexcept {
  stream_args a{st.out, st.in1, st.in2, st.scalar, n};
  void* args[] = {&a};
  const void* k = stream_kernel(static_cast<kop>(st.op), f64);
  if (k == nullptr) return cudaErrorInvalidValue;
  return cudaLaunchKernel(k, dim3(grid), dim3(block_of[shape_for(st.op)]), args, 0, s);
}

cudaError_t launch_dot_coop(const kstep& st, std::uint64_t n, bool f64, double* partials, int grid,
                            cudaStream_t s) noexcept {
  stream_args a{st.out, st.in1, st.in2, 0.0, n};
  void* args[] = {&a, &partials};
  return cudaLaunchCooperativeKernel(kernel_of(kernel_id::dot_coop, f64), dim3(grid), dim3(block_threads), args, 0,
                                     s);
}

cudaError_t launch_dot_split(const kstep& st, std::uint64_t n, bool f64, double* partials, int grid,
                             cudaStream_t s) noexcept {
  stream_args a{st.out, st.in1, st.in2, 0.0, n};
  void* args[] = {&a, &partials};
  cudaError_t e =
      cudaLaunchKernel(kernel_of(kernel_id::dot_partial, f64), dim3(grid), dim3(block_threads), args, 0, s);
  if (e != cudaSuccess) return e;
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  void* out = st.out;
  void* fargs[] = {&partials, &grid, &out};
  const void* fk = f64 ? reinterpret_cast<const void*>(&dot_final_k<double>)
                       : reinterpret_cast<const void*>(&dot_final_k<float>);
  return cudaLaunchKernel(fk, dim3(1), dim3(block_threads), fargs, 0, s);
}

cudaError_t launch_program_coop(const kprogram& p, bool f64, int grid, cudaStream_t s) noexcept {
  void* args[] = {const_cast<kprogram*>(&p)};
  return cudaLaunchCooperativeKernel(kernel_of(kernel_id::program_coop, f64), dim3(grid), dim3(block_threads), args,
                                     0, s);
}

cudaError_t launch_segment_split(const kprogram& p, int seg, bool f64, int grid, cudaStream_t s) noexcept {
  void* args[] = {const_cast<kprogram*>(&p), &seg};
  cudaError_t e =
      cudaLaunchKernel(kernel_of(kernel_id::program_split, f64), dim3(grid), dim3(block_threads), args, 0, s);
  if (e != cudaSuccess) return e;
  const ksegment& sg = p.segments[seg];
  if (sg.dot < 0) return cudaSuccess;
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  double* partials = p.partials;
  void* out = p.steps[sg.dot].out;
  void* fargs[] = {&partials, &grid, &out};
  const void* fk = f64 ? reinterpret_cast<const void*>(&dot_final_k<double>)
                       : reinterpret_cast<const void*>(&dot_final_k<float>);
  return cudaLaunchKernel(fk, dim3(1), dim3(block_threads), fargs, 0, s);
}

}  // namespace roster::cuda::detail
