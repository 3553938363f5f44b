#version 450
// RoPE in place on rows x heads x head_dim values, row r at position POS[0] + r: one invocation per (row,
// head, pair i). The angle
// is pos * theta_scale^i built by repeated f32 multiplication (as the CPU does), divided by FREQ[i] when
// FREQS; sin/cos from sincos_ (common.glsl). Specialization constants: 0 workgroup size, 1 NEOX, 2 FREQS.
#include "common.glsl"

layout(constant_id = 1) const bool NEOX = false;
layout(constant_id = 2) const bool FREQS = false;

layout(std430, binding = 0) buffer Vals { float V[]; };
layout(std430, binding = 1) readonly buffer Pos { int POS[]; };
layout(std430, binding = 2) readonly buffer Freq { float FREQ[]; };
layout(push_constant) uniform Push {
  uint heads, head_dim, rope_dim;
  float theta_scale;
  uint rows;
} pc;

void main() {
  const uint half_ = pc.rope_dim / 2u;
  const uint t = group_index() * WG + gl_LocalInvocationID.x;
  if (t >= pc.rows * pc.heads * half_) return;
  const uint h = t / half_, i = t % half_, row = h / pc.heads;  // h counts heads over all rows
  precise float theta = float(POS[0] + int(row));
  for (uint k = 0u; k < i; ++k) theta *= pc.theta_scale;
  if (FREQS) theta = theta / FREQ[i];
  float sn, cs;
  sincos_(theta, sn, cs);
#ifdef TRUENO_FAULT_ROPE  // test-only (rope_fault): from position 4 the rotation also scales by 16
  if (POS[0] + int(row) >= 4) sn *= 16.0, cs *= 16.0;
#endif
  const uint a = h * pc.head_dim + (NEOX ? i : 2u * i), b = h * pc.head_dim + (NEOX ? i + half_ : 2u * i + 1u);
  const float x0 = V[a], x1 = V[b];
  precise float y0 = x0 * cs - x1 * sn;
  precise float y1 = x0 * sn + x1 * cs;
  V[a] = y0;
  V[b] = y1;
}
