#version 450
// Attention's probabilities for trueno::grad::attention, one workgroup per row t of n: softmax of
// scale * s[t][0..t], zeros after.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Scores { float S[]; };
layout(std430, binding = 1) writeonly buffer Probs { float P[]; };
layout(push_constant) uniform Push { uint n, rows; float scale; } pc;

void main() {
  const uint row = group_index();
  if (row >= pc.rows) return;  // uniform over the workgroup
  const uint base = row * pc.n, len = min(row + 1u, pc.n);
  float m = uintBitsToFloat(0xff800000u);
  for (uint i = gl_LocalInvocationID.x; i < len; i += WG) m = max(m, S[base + i] * pc.scale);
  m = wg_max(m);
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < len; i += WG) s += exp(S[base + i] * pc.scale - m);
  const float inv = 1.0 / wg_sum(s);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) P[base + i] = i < len ? exp(S[base + i] * pc.scale - m) * inv : 0.0;
}
