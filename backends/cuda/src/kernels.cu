// The CUDA kernels of the STREAM ops, for the H200 first: 16-byte loads with
// a scalar tail, several independent loads in flight per thread, grids sized
// from the multiprocessor count, and one cooperative launch per program with
// grid-wide sync between segments.
//
// Device code only: scripts/regen-cuda-fatbin builds it with nvcc -fatbin
// into the committed image (include/roster/backends/cuda/detail/fatbin/),
// which the backend loads with cuModuleLoadData. Every kernel is extern "C"
// (kernels.hpp lists the names) and the host launches it with cuLaunchKernel
// or cuLaunchCooperativeKernel; nothing here runs on the host.

#include <roster/backends/cuda/detail/kernels.hpp>

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

namespace roster::cuda::detail {
namespace {

// A 16-byte vector of T, indexed only with compile-time constants.
template <class T>
struct pack {
  static constexpr int width = 16 / sizeof(T);
  T v[width];
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

}  // namespace

// Sums v over the block; the result is valid in thread 0. Safe to call repeatedly.
// Outside the anonymous namespace: its __shared__ array's name then carries no
// hash of the file's path, so the image is the same from any checkout
// (cuda_fatbin_fresh compares it byte for byte).
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

namespace {

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
template <class T, int OP, int CS, int U>
__device__ __forceinline__ void stream_k(const stream_args& a) {
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
__device__ __forceinline__ void dot_coop_k(const stream_args& a, double* partials) {
  const double b = block_sum(dot_share<T, CS, 4>(a.in1, a.in2, a.n));
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
  cg::this_grid().sync();
  if (blockIdx.x == 0) final_sum<T>(partials, gridDim.x, a.out);
}

template <class T, int CS>
__device__ __forceinline__ void dot_partial_k(const stream_args& a, double* partials) {
  const double b = block_sum(dot_share<T, CS, 4>(a.in1, a.in2, a.n));
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
}

template <class T>
__device__ __forceinline__ void dot_final_k(const double* partials, int count, void* r) {
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
__device__ __forceinline__ void program_coop_k(const kprogram& p) {
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
__device__ __forceinline__ void program_split_k(const kprogram& p, int g) {
  const ksegment& sg = p.segments[g];
  const double acc = run_segment<T>(p, sg);
  if (sg.dot >= 0) {
    const double b = block_sum(acc);
    if (threadIdx.x == 0) p.partials[blockIdx.x] = b;
  }
}

// ---- the kernels, by name -------------------------------------------------------

}  // namespace
}  // namespace roster::cuda::detail

using namespace roster::cuda::detail;

// The fast path: one kernel per type, op and shape (kernels.hpp's tables).
#define ROSTER_IMPL_STREAM(TN, T, OP, S)                                                                       \
  extern "C" __global__ void __launch_bounds__(block_of[S]) roster_stream_##TN##_##OP##_s##S(stream_args a) { \
    stream_k<T, k_##OP, hint_of[S], unroll_of[S]>(a);                                                          \
  }
#define ROSTER_IMPL_STREAM_OPS(TN, T, S)                                                                       \
  ROSTER_IMPL_STREAM(TN, T, fill, S) ROSTER_IMPL_STREAM(TN, T, copy, S) ROSTER_IMPL_STREAM(TN, T, mul, S)      \
  ROSTER_IMPL_STREAM(TN, T, add, S) ROSTER_IMPL_STREAM(TN, T, triad, S) ROSTER_IMPL_STREAM(TN, T, nstream, S)
#define ROSTER_IMPL_STREAM_SHAPES(TN, T)                                                                       \
  ROSTER_IMPL_STREAM_OPS(TN, T, 0) ROSTER_IMPL_STREAM_OPS(TN, T, 1) ROSTER_IMPL_STREAM_OPS(TN, T, 2)           \
  ROSTER_IMPL_STREAM_OPS(TN, T, 3) ROSTER_IMPL_STREAM_OPS(TN, T, 4) ROSTER_IMPL_STREAM_OPS(TN, T, 5)           \
  ROSTER_IMPL_STREAM_OPS(TN, T, 6) ROSTER_IMPL_STREAM_OPS(TN, T, 7) ROSTER_IMPL_STREAM_OPS(TN, T, 8)           \
  ROSTER_IMPL_STREAM_OPS(TN, T, 9) ROSTER_IMPL_STREAM_OPS(TN, T, 10) ROSTER_IMPL_STREAM_OPS(TN, T, 11)
ROSTER_IMPL_STREAM_SHAPES(f32, float)
ROSTER_IMPL_STREAM_SHAPES(f64, double)

// The dot: one cooperative launch, or partials and a final sum; by cache hint.
#define ROSTER_IMPL_DOT(TN, T, H)                                                                              \
  extern "C" __global__ void __launch_bounds__(block_threads)                                                 \
      roster_dot_coop_##TN##_h##H(stream_args a, double* partials) {                                          \
    dot_coop_k<T, H>(a, partials);                                                                             \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(block_threads)                                                 \
      roster_dot_partial_##TN##_h##H(stream_args a, double* partials) {                                       \
    dot_partial_k<T, H>(a, partials);                                                                          \
  }
ROSTER_IMPL_DOT(f32, float, 0) ROSTER_IMPL_DOT(f32, float, 1) ROSTER_IMPL_DOT(f32, float, 2)
ROSTER_IMPL_DOT(f64, double, 0) ROSTER_IMPL_DOT(f64, double, 1) ROSTER_IMPL_DOT(f64, double, 2)

// The final sum of a dot's partials, and the program interpreter.
#define ROSTER_IMPL_PROGRAM(TN, T)                                                                             \
  extern "C" __global__ void __launch_bounds__(block_threads)                                                 \
      roster_dot_final_##TN(const double* partials, int count, void* r) {                                     \
    dot_final_k<T>(partials, count, r);                                                                        \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(block_threads)                                                 \
      roster_program_coop_##TN(const __grid_constant__ kprogram p) {                                          \
    program_coop_k<T>(p);                                                                                      \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(block_threads)                                                 \
      roster_program_split_##TN(const __grid_constant__ kprogram p, int g) {                                  \
    program_split_k<T>(p, g);                                                                                  \
  }
ROSTER_IMPL_PROGRAM(f32, float)
ROSTER_IMPL_PROGRAM(f64, double)
