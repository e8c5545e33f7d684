// Dot product in two phases. PHASE 0: each workgroup sums a[i]*b[i] over a
// grid-stride range of one chunk and writes partial[group], the partial
// buffer being bound at this chunk's slice (so chunks share no bytes).
// S is the element type; T is S or a 16-byte vector of it (a, b only). PHASE 1:
// one workgroup sums partial[0..n) into r[0]. The includer defines T.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint PHASE = 0;

layout(set = 0, binding = 0) buffer result_buffer { S r[]; };
layout(set = 0, binding = 1) readonly buffer a_buffer { T a[]; };
layout(set = 0, binding = 2) readonly buffer b_buffer { T b[]; };
layout(set = 0, binding = 3) buffer partial_buffer { S partial[]; };

layout(push_constant) uniform constants {
  uint n;     // PHASE 0: end of the range in T elements; PHASE 1: partial sums
  uint base;  // PHASE 0: start of the range (the scalar tail after a vector bulk)
  S s;        // unused
} pc;

shared S sums[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  S acc = S(0);
  if (PHASE == 0) {
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = pc.base + gl_GlobalInvocationID.x; i < pc.n; i += stride) acc += dot(a[i], b[i]);
  } else {
    for (uint i = lid; i < pc.n; i += gl_WorkGroupSize.x) acc += partial[i];
  }
  sums[lid] = acc;
  barrier();
  for (uint width = gl_WorkGroupSize.x / 2; width > 0; width /= 2) {
    if (lid < width) sums[lid] += sums[lid + width];
    barrier();
  }
  if (lid == 0) {
    if (PHASE == 0) partial[gl_WorkGroupID.x] = sums[0];
    else r[0] = sums[0];
  }
}
