#version 450
// out[r] = (x[r] - mean) / sqrt(var + eps) * w + b for rows of n, one workgroup per row (two passes over
// the row: the mean, then the population variance about it), as trueno::ops::layernorm.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer In { float X[]; };
layout(std430, binding = 1) readonly buffer Weight { float Wt[]; };
layout(std430, binding = 2) readonly buffer Bias { float Bs[]; };
layout(std430, binding = 3) writeonly buffer Out { float O[]; };
layout(push_constant) uniform Push { uint n; float eps; uint count; } pc;

void main() {
  if (group_index() >= pc.count) return;  // uniform over the workgroup
  const uint base = group_index() * pc.n;
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += X[base + i];
  const float mean = wg_sum(s) / float(pc.n);
  float v = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) v += (X[base + i] - mean) * (X[base + i] - mean);
  const float r = 1.0 / sqrt(wg_sum(v) / float(pc.n) + pc.eps);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) O[base + i] = (X[base + i] - mean) * r * Wt[i] + Bs[i];
}
