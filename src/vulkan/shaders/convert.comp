#version 450
// f32 <-> f16 for the public device ops (src/vulkan/tensor_ops.cpp). Specialization constant 1: 0 turns
// n f32 into f16 bits (round to nearest even, common.glsl's f32_to_f16: NaN stays NaN), one invocation
// per output word of two halves; 1 widens f16 bits to f32, one invocation per element.
#include "common.glsl"

layout(constant_id = 1) const uint TO_F32 = 0u;
layout(std430, binding = 0) readonly buffer In { uint Iv[]; };
layout(std430, binding = 1) writeonly buffer Out { uint Ov[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (TO_F32 == 0u) {
    if (2u * i >= pc.n) return;
    const uint lo = f32_to_f16(uintBitsToFloat(Iv[2u * i]));
    const uint hi = 2u * i + 1u < pc.n ? f32_to_f16(uintBitsToFloat(Iv[2u * i + 1u])) : 0u;
    Ov[i] = lo | (hi << 16);
  } else {
    if (i >= pc.n) return;
    const uint h = (Iv[i / 2u] >> (16u * (i % 2u))) & 0xffffu;
    Ov[i] = floatBitsToUint(f16_to_f32(h));
  }
}
