#version 450
// k and v (rows x n f32 each) into slots POS[0] + row of the f16 caches (slots x n halves, stored as
// 32-bit words), rounded to nearest even: one invocation per pair of values.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer K { float Kin[]; };
layout(std430, binding = 1) readonly buffer Vb { float Vin[]; };
layout(std430, binding = 2) buffer KC { uint KCache[]; };
layout(std430, binding = 3) buffer VC { uint VCache[]; };
layout(std430, binding = 4) readonly buffer Pos { int POS[]; };
layout(push_constant) uniform Push {
  uint n;  // even
  uint rows;
} pc;

void main() {
  const uint j = group_index() * WG + gl_LocalInvocationID.x;
  if (j >= pc.rows * (pc.n / 2u)) return;  // j counts pairs over all rows: row j / (n/2)
  const uint at = uint(POS[0]) * (pc.n / 2u) + j;
  KCache[at] = f32_to_f16(Kin[2u * j]) | (f32_to_f16(Kin[2u * j + 1u]) << 16);
  VCache[at] = f32_to_f16(Vin[2u * j]) | (f32_to_f16(Vin[2u * j + 1u]) << 16);
}
