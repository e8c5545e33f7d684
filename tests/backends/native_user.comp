#version 450
// A user's own compute shader for tests/backends/vulkan_native_test.cpp: it
// reads and writes roster buffers through their VkBuffer handles.
// y[i] = 3 * y[i] + x[i] + (i % 7), for i < n.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; } p;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n) y[i] = 3.0 * y[i] + x[i] + float(i % 7u);
}
