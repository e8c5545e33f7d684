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

namespace roster::detail {

inline constexpr std::size_t cpu_lanes = 16;

template <class T>
inline void cpu_fill(T* __restrict a, T x, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j) a[i + j] = x;
  for (; i < n; ++i) a[i] = x;
}

template <class T>
inline void cpu_copy(T* __restrict c, const T* __restrict a, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j) c[i + j] = a[i + j];
  for (; i < n; ++i) c[i] = a[i];
}

template <class T>
inline void cpu_mul(T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j) b[i + j] = s * c[i + j];
  for (; i < n; ++i) b[i] = s * c[i];
}

template <class T>
inline void cpu_add(T* __restrict c, const T* __restrict a, const T* __restrict b, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j) c[i + j] = a[i + j] + b[i + j];
  for (; i < n; ++i) c[i] = a[i] + b[i];
}

template <class T>
inline void cpu_triad(T* __restrict a, const T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j) a[i + j] = b[i + j] + s * c[i + j];
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

template <class T>
inline void cpu_nstream(T* __restrict a, const T* __restrict b, const T* __restrict c, T s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + cpu_lanes <= n; i += cpu_lanes)
    for (std::size_t j = 0; j < cpu_lanes; ++j) a[i + j] += b[i + j] + s * c[i + j];
  for (; i < n; ++i) a[i] += b[i] + s * c[i];
}

// Returns sum a[i] * b[i] accumulated in double: cpu_lanes running sums
// (lane j adds terms j, j + lanes, ...), then the lanes pairwise. A float
// product is exact in double; a double product rounds once.
template <class T>
inline double cpu_dot(const T* __restrict a, const T* __restrict b, std::size_t n) noexcept {
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

}  // namespace roster::detail
