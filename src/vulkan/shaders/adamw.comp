#version 450
// One AdamW step in place (trueno::grad::adamw_step): m, v the moments; c1 = 1 - beta1^t, c2 = 1 - beta2^t
// from the host.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Grad { float G[]; };
layout(std430, binding = 1) buffer Weights { float W[]; };
layout(std430, binding = 2) buffer Moment1 { float M[]; };
layout(std430, binding = 3) buffer Moment2 { float V[]; };
layout(push_constant) uniform Push { uint n; float lr, beta1, beta2, eps, wd, c1, c2; } pc;

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const float g = G[i], m = pc.beta1 * M[i] + (1.0 - pc.beta1) * g, v = pc.beta2 * V[i] + (1.0 - pc.beta2) * g * g;
  M[i] = m;
  V[i] = v;
  W[i] -= pc.lr * ((m / pc.c1) / (sqrt(v / pc.c2) + pc.eps) + pc.wd * W[i]);
}
