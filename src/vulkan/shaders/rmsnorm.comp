#version 450
// out[r] = x[r] * (1 / sqrt(mean(x[r]^2) + eps)) * w, one workgroup per row (trueno::ops::rmsnorm).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer In { float X[]; };
layout(std430, binding = 1) readonly buffer Weight { float Wt[]; };
layout(std430, binding = 2) writeonly buffer Out { float O[]; };
layout(push_constant) uniform Push {
  uint n;
  float eps;
  uint count;
} pc;

void main() {
  if (group_index() >= pc.count) return;  // uniform over the workgroup
  const uint base = group_index() * pc.n;
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += X[base + i] * X[base + i];
  const float ms = wg_sum(s) / float(pc.n);
  const float r = 1.0 / sqrt(ms + pc.eps);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) O[base + i] = X[base + i] * r * Wt[i];
}
