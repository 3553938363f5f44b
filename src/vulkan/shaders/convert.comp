#version 450
// f32 <-> f16 and f32 <-> bf16 for the public device ops (src/vulkan/tensor_ops.cpp). Specialization
// constant 1, MODE: 0 turns n f32 into f16 bits (round to nearest even, common.glsl's f32_to_f16: NaN stays
// NaN), 2 into bf16 bits (the CPU's f32_to_bf16_bits, src/core/half.h), one invocation per output word of
// two halves; 1 widens f16 bits to f32, 3 bf16 bits, one invocation per element. Values move as bits, so
// no float operation can touch a NaN's payload.
#include "common.glsl"

layout(constant_id = 1) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer In { uint Iv[]; };
layout(std430, binding = 1) writeonly buffer Out { uint Ov[]; };
layout(push_constant) uniform Push { uint n; } pc;

// Round to nearest even in integer arithmetic; a NaN keeps its top half with the quiet bit set (adding
// could carry it into infinity).
uint f32_to_bf16(uint x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

uint narrow(uint x) { return MODE == 2u ? f32_to_bf16(x) : f32_to_f16(uintBitsToFloat(x)); }

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (MODE == 0u || MODE == 2u) {
    if (2u * i >= pc.n) return;
    const uint lo = narrow(Iv[2u * i]);
    const uint hi = 2u * i + 1u < pc.n ? narrow(Iv[2u * i + 1u]) : 0u;
    Ov[i] = lo | (hi << 16);
  } else {
    if (i >= pc.n) return;
    const uint h = (Iv[i / 2u] >> (16u * (i % 2u))) & 0xffffu;
    Ov[i] = MODE == 3u ? h << 16 : floatBitsToUint(f16_to_f32(h));
  }
}
