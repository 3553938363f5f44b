#version 450
// Whole-tensor reductions of the public device ops (sum, max, dot, min, mean; src/vulkan/tensor_ops.cpp) in two
// dispatches of this shader: stage 0 gives each of `groups` workgroups a strided share of the n elements
// and writes one partial per workgroup; stage 1 (one workgroup) combines the partials into out[0].
// Specialization constant 1: 0 sum, 1 max, 2 dot, 3 min (-max(-x): negation is exact), 4 mean
// (src/core/device_op_codes.h). The order of additions is a tree, not the CPU's
// compensated sum: the contracts bound the difference (contracts/gpu/vulkan.yaml, tensor_sum).
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0u;
layout(std430, binding = 0) readonly buffer X { float Xv[]; };
layout(std430, binding = 1) readonly buffer Y { float Yv[]; };
layout(std430, binding = 2) buffer P { float Pv[]; };
layout(std430, binding = 3) writeonly buffer O { float Ov[]; };
layout(push_constant) uniform Push { uint n, groups, stage; } pc;

void main() {
  const float neg_inf = uintBitsToFloat(0xff800000u);
  const bool is_max = OP == 1u || OP == 3u;
  float acc = is_max ? neg_inf : 0.0;
  if (pc.stage == 0u) {
    for (uint i = gl_WorkGroupID.x * WG + gl_LocalInvocationID.x; i < pc.n; i += pc.groups * WG) {
      const float v = OP == 2u ? Xv[i] * Yv[i] : OP == 3u ? -Xv[i] : Xv[i];
      acc = is_max ? max(acc, v) : acc + v;
    }
  } else {
    for (uint i = gl_LocalInvocationID.x; i < pc.groups; i += WG) acc = is_max ? max(acc, Pv[i]) : acc + Pv[i];
  }
  const float r = is_max ? wg_max(acc) : wg_sum(acc);
  if (gl_LocalInvocationID.x != 0u) return;
  if (pc.stage == 0u) Pv[gl_WorkGroupID.x] = r;
  else Ov[0] = OP == 3u ? -r : OP == 4u ? r / float(pc.n) : r;
}
