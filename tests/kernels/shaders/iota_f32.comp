#version 450
// out[i] = i + offset for i below the call's extent; an int scalar, then a
// float one after it.
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Args {
  uint n;
  int offset;
  float scale;
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) o[i] = scale * float(int(i) + offset);
}
