#pragma once
// Private: the CPU backend's loops, one per op.
//
// Each loop runs a fixed-width inner loop and then a scalar tail: GCC and
// Clang vectorize a constant trip count even at -O2 (GCC's very-cheap cost
// model refuses a loop whose count is not a known multiple of the vector
// width), so the backend is vectorized whatever the consumer's flags.
//
// The pointers are __restrict: the buffers of one step are either disjoint
// allocations or the very same buffer (mul(b, b, s)). The loops read index i
// before writing index i and never touch another index in between, so an
// identical operand gives the same result in any order the compiler picks;
// a partial overlap cannot occur.

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#  include <emmintrin.h>
#  if defined(__GNUC__)
#    include <immintrin.h>  // the AVX2 copy's 32-byte streaming stores (target attribute)
#  endif
#endif

namespace roster::cpu::detail {

inline constexpr std::size_t cpu_lanes = 16;

// The element-wise loops take one 64-byte cache line per iteration, so the
// stores of a line are adjacent in the loop body whatever order the
// compiler schedules them in. With two lines per iteration (16 doubles) GCC
// interleaved the stores of add across both lines, and add through the
// backend ran at 89 GB/s against 107 for the same loop with in-order stores,
// on the same memory and threads (bench/results/h200-2026-11-30c).
template <class T>
inline constexpr std::size_t cpu_line = 64 / sizeof(T);

// The loops are always inlined: cpu_run_plain_wide below compiles them a
// second time for AVX2, which only works if they are inlined into it.
#if defined(__GNUC__)
#  define ROSTER_CPU_LOOP [[gnu::always_inline]] inline
#else
#  define ROSTER_CPU_LOOP inline
#endif

template <class T>
ROSTER_CPU_LOOP void cpu_fill(T* __restrict a, T x, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_line<T> <= n; i += cpu_line<T>)
    for (std::size_t j = 0; j < cpu_line<T>; ++j) a[i + j] = x;
  for (; i < n; ++i) a[i] = x;
}

template <class T>
ROSTER_CPU_LOOP void cpu_copy(T* __restrict c, const T* __restrict a, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_line<T> <= n; i += cpu_line<T>)
    for (std::size_t j = 0; j < cpu_line<T>; ++j) c[i + j] = a[i + j];
  for (; i < n; ++i) c[i] = a[i];
}

template <class T>
ROSTER_CPU_LOOP void cpu_mul(T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_line<T> <= n; i += cpu_line<T>)
    for (std::size_t j = 0; j < cpu_line<T>; ++j) b[i + j] = s * c[i + j];
  for (; i < n; ++i) b[i] = s * c[i];
}

template <class T>
ROSTER_CPU_LOOP void cpu_add(T* __restrict c, const T* __restrict a, const T* __restrict b, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_line<T> <= n; i += cpu_line<T>)
    for (std::size_t j = 0; j < cpu_line<T>; ++j) c[i + j] = a[i + j] + b[i + j];
  for (; i < n; ++i) c[i] = a[i] + b[i];
}

template <class T>
ROSTER_CPU_LOOP void cpu_triad(T* __restrict a, const T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
#if defined(ROSTER_IMPL_BROKEN_TRIAD_FOR_TESTS)
  s += s;  // deliberately wrong (meson -Dbroken_kernel_for_tests=true): roster-info bench must refuse it
#endif
  std::size_t i = 0;
  for (; i + cpu_line<T> <= n; i += cpu_line<T>)
    for (std::size_t j = 0; j < cpu_line<T>; ++j) a[i + j] = b[i + j] + s * c[i + j];
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

template <class T>
ROSTER_CPU_LOOP void cpu_nstream(T* __restrict a, const T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_line<T> <= n; i += cpu_line<T>)
    for (std::size_t j = 0; j < cpu_line<T>; ++j) a[i + j] += b[i + j] + s * c[i + j];
  for (; i < n; ++i) a[i] += b[i] + s * c[i];
}

// Returns sum a[i] * b[i] accumulated in double: cpu_lanes running sums
// (lane j adds terms j, j + lanes, ...), then the lanes pairwise. A float
// product is exact in double; a double product rounds once.
//
// Accuracy of the whole dot (this per block, then the blocks of a thread in
// order, then the threads in order; every term goes through at most n
// roundings), with u = 2^-53 the unit roundoff of the double accumulator:
//   |dot - sum a_i b_i| <= n * u * sum |a_i b_i|   (to first order in u)
// plus, for float buffers, the final rounding to float: 2^-24 * |sum a_i b_i|.
// tests/backends/cpu_test.cpp checks it on random data of mixed sign.
template <class T>
ROSTER_CPU_LOOP double cpu_dot(const T* __restrict a, const T* __restrict b, std::size_t n) noexcept {
  double acc[cpu_lanes] = {};
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j)
      acc[j] += static_cast<double>(a[i + j]) * static_cast<double>(b[i + j]);
  for (std::size_t j = 0; i < n; ++i, ++j) acc[j] += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  for (std::size_t w = cpu_lanes / 2; w > 0; w /= 2)
    for (std::size_t j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}

// Wider vectors chosen at run time. A build for the x86-64 baseline (SSE2,
// 16-byte vectors) also compiles the plain loops for AVX2 (32-byte vectors),
// and the device runs that copy on a CPU that has AVX2 (cpu_wide_loops).
// Plain loads and stores move the same bytes either way, but on a large
// Xeon the 32-byte loop keeps more misses in flight per core: 2^25-double
// add went from 120 to 138 GB/s on a 32-core Sapphire Rapids guest
// (bench/results/h200-2026-11-30c). No FMA: the AVX2 copy rounds triad,
// nstream and dot exactly as the baseline does, so both give the same bits.
// A build that already targets AVX2 (-march=native) has one copy.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__AVX2__)
#  define ROSTER_CPU_WIDE_CLONE 1
#  define ROSTER_CPU_WIDE __attribute__((target("avx2")))
#else
#  define ROSTER_CPU_WIDE_CLONE 0
#  define ROSTER_CPU_WIDE
#endif
inline constexpr bool cpu_has_wide_clone = ROSTER_CPU_WIDE_CLONE;

// Whether this build carries the AVX2 copy and this CPU can run it.
inline bool cpu_wide_loops_available() noexcept {
#if ROSTER_CPU_WIDE_CLONE
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}

// Streaming stores: for arrays larger than the last-level cache, the output
// is written with non-temporal stores that bypass the cache, so a store does
// not first read its line from memory (write-allocate) and evict what the
// next pass needs. x86 only; elsewhere cpu_has_streaming is false and the
// plain loops run. The caller issues cpu_stream_fence() before other threads
// may read the output.
#if defined(__SSE2__)
inline constexpr bool cpu_has_streaming = true;

template <class T>
struct cpu_vector {
  typedef T type __attribute__((vector_size(16)));
};
template <class T>
using cpu_vec = typename cpu_vector<T>::type;

template <class T>
inline cpu_vec<T> cpu_load(const T* p) noexcept {
  cpu_vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void cpu_stream(double* p, cpu_vec<double> v) noexcept { _mm_stream_pd(p, reinterpret_cast<__m128d&>(v)); }
inline void cpu_stream(float* p, cpu_vec<float> v) noexcept { _mm_stream_ps(p, reinterpret_cast<__m128&>(v)); }
inline void cpu_stream_fence() noexcept { _mm_sfence(); }

// out[i] = f(i) for i in [0, n): scalar up to a 16-byte boundary, then one
// full cache line (four 16-byte streaming stores) per iteration, then a tail.
template <class T, class Scalar, class Vector>
inline void cpu_stream_loop(T* __restrict out, std::size_t n, Scalar scalar, Vector vector) noexcept {
  constexpr std::size_t w = 16 / sizeof(T);
  std::size_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 15) != 0; ++i) out[i] = scalar(i);
  for (; i + 4 * w <= n; i += 4 * w) {
    const cpu_vec<T> v0 = vector(i), v1 = vector(i + w), v2 = vector(i + 2 * w), v3 = vector(i + 3 * w);
    cpu_stream(out + i, v0);
    cpu_stream(out + i + w, v1);
    cpu_stream(out + i + 2 * w, v2);
    cpu_stream(out + i + 3 * w, v3);
  }
  for (; i < n; ++i) out[i] = scalar(i);
}

template <class T>
inline void cpu_fill_stream(T* __restrict a, T x, std::size_t n) noexcept {
  cpu_vec<T> v;
  for (std::size_t j = 0; j < 16 / sizeof(T); ++j) v[j] = x;
  cpu_stream_loop(a, n, [&](std::size_t) { return x; }, [&](std::size_t) { return v; });
}
template <class T>
inline void cpu_copy_stream(T* __restrict c, const T* __restrict a, std::size_t n) noexcept {
  cpu_stream_loop(c, n, [&](std::size_t i) { return a[i]; }, [&](std::size_t i) { return cpu_load(a + i); });
}
template <class T>
inline void cpu_mul_stream(T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
  cpu_stream_loop(b, n, [&](std::size_t i) { return s * c[i]; }, [&](std::size_t i) { return s * cpu_load(c + i); });
}
template <class T>
inline void cpu_add_stream(T* __restrict c, const T* __restrict a, const T* __restrict b, std::size_t n) noexcept {
  cpu_stream_loop(c, n, [&](std::size_t i) { return a[i] + b[i]; },
                  [&](std::size_t i) { return cpu_load(a + i) + cpu_load(b + i); });
}
template <class T>
inline void cpu_triad_stream(T* __restrict a, const T* __restrict b, const T* __restrict c, T s,
                             std::size_t n) noexcept {
#if defined(ROSTER_IMPL_BROKEN_TRIAD_FOR_TESTS)
  s += s;  // deliberately wrong, as in cpu_triad
#endif
  cpu_stream_loop(a, n, [&](std::size_t i) { return b[i] + s * c[i]; },
                  [&](std::size_t i) { return cpu_load(b + i) + s * cpu_load(c + i); });
}
#else
inline constexpr bool cpu_has_streaming = false;
inline void cpu_stream_fence() noexcept {}
template <class T>
inline void cpu_fill_stream(T* a, T x, std::size_t n) noexcept { cpu_fill(a, x, n); }
template <class T>
inline void cpu_copy_stream(T* c, const T* a, std::size_t n) noexcept { cpu_copy(c, a, n); }
template <class T>
inline void cpu_mul_stream(T* b, const T* c, T s, std::size_t n) noexcept { cpu_mul(b, c, s, n); }
template <class T>
inline void cpu_add_stream(T* c, const T* a, const T* b, std::size_t n) noexcept { cpu_add(c, a, b, n); }
template <class T>
inline void cpu_triad_stream(T* a, const T* b, const T* c, T s, std::size_t n) noexcept { cpu_triad(a, b, c, s, n); }
#endif

// The streaming loops in the AVX2 copy (see cpu_has_wide_clone): 32-byte
// non-temporal stores, one cache line per two. The same arithmetic as the
// 16-byte loops (no FMA), so both give the same bits.
#if defined(__SSE2__) && (ROSTER_CPU_WIDE_CLONE || defined(__AVX2__))
inline constexpr bool cpu_has_wide_streaming = true;
ROSTER_CPU_WIDE inline __m256d cpu_wide_load(const double* p) noexcept { return _mm256_loadu_pd(p); }
ROSTER_CPU_WIDE inline __m256 cpu_wide_load(const float* p) noexcept { return _mm256_loadu_ps(p); }
ROSTER_CPU_WIDE inline __m256d cpu_wide_set(double x) noexcept { return _mm256_set1_pd(x); }
ROSTER_CPU_WIDE inline __m256 cpu_wide_set(float x) noexcept { return _mm256_set1_ps(x); }
ROSTER_CPU_WIDE inline __m256d cpu_wide_add(__m256d a, __m256d b) noexcept { return _mm256_add_pd(a, b); }
ROSTER_CPU_WIDE inline __m256 cpu_wide_add(__m256 a, __m256 b) noexcept { return _mm256_add_ps(a, b); }
ROSTER_CPU_WIDE inline __m256d cpu_wide_mul(__m256d a, __m256d b) noexcept { return _mm256_mul_pd(a, b); }
ROSTER_CPU_WIDE inline __m256 cpu_wide_mul(__m256 a, __m256 b) noexcept { return _mm256_mul_ps(a, b); }
ROSTER_CPU_WIDE inline void cpu_wide_stream(double* p, __m256d v) noexcept { _mm256_stream_pd(p, v); }
ROSTER_CPU_WIDE inline void cpu_wide_stream(float* p, __m256 v) noexcept { _mm256_stream_ps(p, v); }

// out = fill x | copy a | mul s*a | add a+b | triad a+s*b over [0, n); false
// for an op it has no loop for. Scalar up to a 32-byte boundary, then 32-byte
// streaming stores, then a scalar tail.
template <class Op, class T>
ROSTER_CPU_WIDE bool cpu_stream_wide(Op kind, T* __restrict out, const T* __restrict a, const T* __restrict b, T s,
                                     std::size_t n) noexcept {
  if (kind != Op::fill && kind != Op::copy && kind != Op::mul && kind != Op::add && kind != Op::triad) return false;
#  if defined(ROSTER_IMPL_BROKEN_TRIAD_FOR_TESTS)
  if (kind == Op::triad) s += s;  // deliberately wrong, as in cpu_triad
#  endif
  constexpr std::size_t w = 32 / sizeof(T);
  auto one = [&](std::size_t i) noexcept {
    switch (kind) {
      case Op::fill: return s;
      case Op::copy: return a[i];
      case Op::mul: return s * a[i];
      case Op::add: return a[i] + b[i];
      default: return a[i] + s * b[i];
    }
  };
  std::size_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 31) != 0; ++i) out[i] = one(i);
  const auto k = cpu_wide_set(s);
  switch (kind) {
    case Op::fill:
      for (; i + w <= n; i += w) cpu_wide_stream(out + i, k);
      break;
    case Op::copy:
      for (; i + w <= n; i += w) cpu_wide_stream(out + i, cpu_wide_load(a + i));
      break;
    case Op::mul:
      for (; i + w <= n; i += w) cpu_wide_stream(out + i, cpu_wide_mul(k, cpu_wide_load(a + i)));
      break;
    case Op::add:
      for (; i + w <= n; i += w) cpu_wide_stream(out + i, cpu_wide_add(cpu_wide_load(a + i), cpu_wide_load(b + i)));
      break;
    default:
      for (; i + w <= n; i += w)
        cpu_wide_stream(out + i, cpu_wide_add(cpu_wide_load(a + i), cpu_wide_mul(k, cpu_wide_load(b + i))));
      break;
  }
  for (; i < n; ++i) out[i] = one(i);
  return true;
}
#else
inline constexpr bool cpu_has_wide_streaming = false;
template <class Op, class T>
inline bool cpu_stream_wide(Op, T*, const T*, const T*, T, std::size_t) noexcept { return false; }
#endif

}  // namespace roster::cpu::detail
