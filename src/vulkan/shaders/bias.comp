#version 450
// The broadcast (bias) add and its gradient for the public device ops (src/vulkan/tensor_ops.cpp).
// Specialization constant 1, STAGE: 0 out[i] = x[i] + b[i % n] over rows * n elements; 1 db[j] (+)= the
// sum of the rows of dy[.][j], one invocation per column adding the rows in order (deterministic, the
// host's bits for that order; Note [Deterministic parameter gradients], src/api/device_grad.cpp).
#include "common.glsl"

layout(constant_id = 1) const uint STAGE = 0u;
layout(std430, binding = 0) readonly buffer X { float Xv[]; };
layout(std430, binding = 1) readonly buffer B { float Bv[]; };
layout(std430, binding = 2) buffer O { float Ov[]; };
layout(push_constant) uniform Push { uint n, rows, accumulate; } pc;

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (STAGE == 0u) {
    if (i >= pc.n * pc.rows) return;
    Ov[i] = Xv[i] + Bv[i % pc.n];
  } else {
    if (i >= pc.n) return;
    precise float s = pc.accumulate != 0u ? Ov[i] : 0.0;
    for (uint r = 0u; r < pc.rows; ++r) s += Xv[r * pc.n + i];
    Ov[i] = s;
  }
}
