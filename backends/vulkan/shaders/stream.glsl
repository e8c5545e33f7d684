// Element-wise STREAM steps over one chunk of the buffers. The includer
// defines S, the element type (float or double), and T, the type one
// invocation moves: S itself, or a 16-byte vector of S (vec4, dvec2) for the
// bulk of a chunk. The op is a specialization constant, so each (op, type)
// pair becomes its own pipeline with the other branches folded away.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

// 0 fill, 1 copy, 2 mul, 3 add, 4 triad, 5 nstream (roster::op order).
layout(constant_id = 0) const uint OP = 0;

layout(set = 0, binding = 0) buffer out_buffer { T out_[]; };
layout(set = 0, binding = 1) readonly buffer in1_buffer { T in1[]; };
layout(set = 0, binding = 2) readonly buffer in2_buffer { T in2[]; };

layout(push_constant) uniform constants {
  uint n;     // end of the range, in T elements of the bound chunk
  uint base;  // start of the range (the scalar tail after a vector bulk)
  S s;        // fill x, mul/triad/nstream s
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = pc.base + gl_GlobalInvocationID.x; i < pc.n; i += stride) {
    if (OP == 0) out_[i] = T(pc.s);
    else if (OP == 1) out_[i] = in1[i];
    else if (OP == 2) out_[i] = pc.s * in1[i];
    else if (OP == 3) out_[i] = in1[i] + in2[i];
    else if (OP == 4) out_[i] = in1[i] + pc.s * in2[i];
    else if (OP == 5) out_[i] += in1[i] + pc.s * in2[i];
  }
}
