#version 450
// One 5-point Jacobi step for roster's Vulkan backend: out at binding 0 and
// in at binding 1 (the signature's order), then the push constants: the
// extent (nx * ny) and the scalars nx and ny.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { double o[]; };
layout(std430, set = 0, binding = 1) readonly buffer In { double a[]; };
layout(push_constant) uniform Args {
  uint n;
  uint nx;
  uint ny;
};
void main() {
  uint k = gl_GlobalInvocationID.x;
  if (k >= n) return;
  uint i = k % nx, j = k / nx;
  if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
    o[k] = a[k];
  } else {
    o[k] = 0.25 * ((a[k - 1] + a[k + 1]) + (a[k - nx] + a[k + nx]));
  }
}
