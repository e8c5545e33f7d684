// The stencil example's kernel, shared by its CPU entry and its reference:
// one 5-point Jacobi step on an nx-by-ny grid stored row by row. Interior
// points take the mean of their four neighbours; boundary points keep their
// value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stencil {

template <class T>
inline T jacobi_point(const T* in, std::size_t k, std::uint32_t nx, std::uint32_t ny) {
  const std::size_t i = k % nx, j = k / nx;
  if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) return in[k];
  return T(0.25) * ((in[k - 1] + in[k + 1]) + (in[k - nx] + in[k + nx]));
}

}  // namespace stencil
