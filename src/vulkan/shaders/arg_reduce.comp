#version 450
// Whole-tensor argmax / argmin of the public device ops (src/vulkan/tensor_ops.cpp) in two dispatches, as
// reduce.comp: stage 0, each of `groups` workgroups writes the best (value, index) of a strided share into
// the partials (values as bits, then indices); stage 1, one workgroup combines them into out[0].
// Specialization constant 1: 1 for argmin, done as argmax of -x (negation is exact and keeps NaN).
// The CPU's rules (src/cpu/kernels/reduce/reduce_ref.cpp): a NaN beats any number, ties go to the first
// index. They are a total order, so the result does not depend on the order of combination.
#include "common.glsl"

layout(constant_id = 1) const uint IS_MIN = 0u;
layout(std430, binding = 0) readonly buffer X { float Xv[]; };
layout(std430, binding = 1) buffer P { uint Pv[]; };
layout(std430, binding = 2) writeonly buffer O { int Ov[]; };
layout(push_constant) uniform Push { uint n, groups, stage; } pc;

shared float best_v[WG];
shared uint best_i[WG];

bool beats(float v, uint i, float bv, uint bi) {
  const bool vn = isnan(v), bn = isnan(bv);
  if (vn != bn) return vn;
  return vn || v == bv ? i < bi : v > bv;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  float bv = uintBitsToFloat(0xff800000u);
  uint bi = 0xffffffffu;
  if (pc.stage == 0u) {
    for (uint i = gl_WorkGroupID.x * WG + t; i < pc.n; i += pc.groups * WG) {
      const float v = IS_MIN == 1u ? -Xv[i] : Xv[i];
      if (beats(v, i, bv, bi)) { bv = v; bi = i; }
    }
  } else {
    for (uint i = t; i < pc.groups; i += WG) {
      const float v = uintBitsToFloat(Pv[i]);
      if (beats(v, Pv[pc.groups + i], bv, bi)) { bv = v; bi = Pv[pc.groups + i]; }
    }
  }
  best_v[t] = bv;
  best_i[t] = bi;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s && beats(best_v[t + s], best_i[t + s], best_v[t], best_i[t])) {
      best_v[t] = best_v[t + s];
      best_i[t] = best_i[t + s];
    }
    barrier();
  }
  if (t != 0u) return;
  if (pc.stage == 0u) {
    Pv[gl_WorkGroupID.x] = floatBitsToUint(best_v[0]);
    Pv[pc.groups + gl_WorkGroupID.x] = best_i[0];
  } else {
    Ov[0] = int(best_i[0]);
  }
}
