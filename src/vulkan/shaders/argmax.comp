#version 450
// OUT[r] = the index of the largest value of row r (greedy sampling), one workgroup per row: the first
// index on ties, and a NaN beats every number (the first NaN wins), as trueno::ops::argmax.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer In { float X[]; };
layout(std430, binding = 1) writeonly buffer Out { uint OUT[]; };
layout(push_constant) uniform Push { uint n, count; } pc;

shared float best_v[WG];
shared uint best_i[WG];

// Whether (va, ia) comes before (vb, ib).
bool better(float va, uint ia, float vb, uint ib) {
  const bool na = isnan(va), nb = isnan(vb);
  if (na || nb) return na && (!nb || ia < ib);
  return va > vb || (va == vb && ia < ib);
}

void main() {
  if (group_index() >= pc.count) return;  // uniform over the workgroup
  const uint tid = gl_LocalInvocationID.x, base = group_index() * pc.n;
  float v = 0.0;
  uint idx = 0xffffffffu;
  for (uint i = tid; i < pc.n; i += WG) {
    const float x = X[base + i];
    if (idx == 0xffffffffu || better(x, i, v, idx)) v = x, idx = i;
  }
  best_v[tid] = v;
  best_i[tid] = idx;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (tid < s && best_i[tid + s] != 0xffffffffu &&
        (best_i[tid] == 0xffffffffu || better(best_v[tid + s], best_i[tid + s], best_v[tid], best_i[tid]))) {
      best_v[tid] = best_v[tid + s];
      best_i[tid] = best_i[tid + s];
    }
    barrier();
  }
  if (tid == 0u) OUT[group_index()] = best_i[0];
}
