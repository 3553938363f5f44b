#version 450
// g[i] = silu(g[i]) * u[i] = g / (1 + exp(-g)) * u, in place (trueno::ops::swiglu).
#include "common.glsl"

layout(std430, binding = 0) buffer G { float Gv[]; };
layout(std430, binding = 1) readonly buffer U { float Uv[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const float g = Gv[i];
  Gv[i] = g / (1.0 + exp(-g)) * Uv[i];
}
