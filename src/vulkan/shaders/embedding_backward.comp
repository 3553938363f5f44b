#version 450
// The embedding's backward (trueno::grad::embedding): one invocation per column j of the table gradient
// [rows][dim], zeroed unless accumulating, then the tokens in order add their dy row; ids outside the table
// are skipped (Note [Deterministic parameter gradients], src/api/device_grad.cpp).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Ids { int ID[]; };
layout(std430, binding = 1) readonly buffer Dy { float G[]; };
layout(std430, binding = 2) buffer Table { float D[]; };
layout(push_constant) uniform Push { uint tokens, dim, rows, accumulate; } pc;

void main() {
  const uint j = group_index() * WG + gl_LocalInvocationID.x;
  if (j >= pc.dim) return;
  if (pc.accumulate == 0u)
    for (uint r = 0u; r < pc.rows; ++r) D[r * pc.dim + j] = 0.0;
  for (uint t = 0u; t < pc.tokens; ++t) {
    const int id = ID[t];
    if (id < 0 || uint(id) >= pc.rows) continue;
    D[uint(id) * pc.dim + j] += G[t * pc.dim + j];
  }
}
