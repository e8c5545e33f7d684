#version 450
// y[i] += alpha * x[i] over floats.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Y { float y[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(push_constant) uniform Args {
  uint n;
  float alpha;
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] += alpha * x[i];
}
