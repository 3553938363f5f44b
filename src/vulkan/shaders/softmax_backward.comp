#version 450
// dx[r] = y[r] * (dy[r] - sum(dy[r] * y[r])) for rows of n, one workgroup per row: softmax's backward from
// its output, as trueno::grad::softmax (src/vulkan/tensor_ops.cpp).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Y { float Yv[]; };
layout(std430, binding = 1) readonly buffer DY { float Dv[]; };
layout(std430, binding = 2) writeonly buffer DX { float Ov[]; };
layout(push_constant) uniform Push { uint n, count; } pc;

void main() {
  if (group_index() >= pc.count) return;  // uniform over the workgroup
  const uint base = group_index() * pc.n;
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += Dv[base + i] * Yv[base + i];
  s = wg_sum(s);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) Ov[base + i] = Yv[base + i] * (Dv[base + i] - s);
}
