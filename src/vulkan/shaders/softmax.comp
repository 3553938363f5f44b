#version 450
// out[r] = softmax(x[r]) for rows of n, one workgroup per row: the row's max, the sum of exp(x - max),
// then exp(x - max) / sum, as trueno::ops::softmax (src/vulkan/tensor_ops.cpp).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer In { float X[]; };
layout(std430, binding = 1) writeonly buffer Out { float O[]; };
layout(push_constant) uniform Push { uint n, count; } pc;

void main() {
  if (group_index() >= pc.count) return;  // uniform over the workgroup
  const uint base = group_index() * pc.n;
  float m = uintBitsToFloat(0xff800000u);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) m = max(m, X[base + i]);
  m = wg_max(m);
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += exp(X[base + i] - m);
  const float inv = 1.0 / wg_sum(s);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) O[base + i] = exp(X[base + i] - m) * inv;
}
