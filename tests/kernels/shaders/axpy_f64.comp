#version 450
// y[i] += alpha * x[i]: buffers at bindings 0..1 in signature order, the
// extent then the scalar as push constants (docs/kernels.md).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Y { double y[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { double x[]; };
layout(push_constant) uniform Args {
  uint n;
  double alpha;
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] += alpha * x[i];
}
