// The stencil example's OpenCL variant: the same 5-point Jacobi step as
// jacobi.hpp, in OpenCL C. Its parameters are the signature's in order (out,
// in, nx, ny), then the extent; the device runs the extent rounded up to the
// local size, so the kernel checks k against it.
#pragma once

#include <string_view>

namespace stencil {

inline constexpr std::string_view jacobi_opencl = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void jacobi(global double* out, global const double* in, uint nx, uint ny, ulong n) {
  const ulong k = get_global_id(0);
  if (k >= n) return;
  const ulong i = k % nx, j = k / nx;
  if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) out[k] = in[k];
  else out[k] = 0.25 * ((in[k - 1] + in[k + 1]) + (in[k - nx] + in[k + nx]));
}
)CL";

}  // namespace stencil
