#version 450
// RoPE's backward (trueno::grad::rope): dy rotated back, rows of heads x head_dim, row r at position
// pos + r. One invocation per (row, head, j): j < rope_dim / 2 the pair j at angle
// (pos + r) * base^(-2j / rope_dim) (f32 pow, sincos_ from common.glsl; the host works in f64), the rest
// copy the unrotated tail. NEOX (specialization constant 1): pairs (j, j + rope_dim / 2).
#include "common.glsl"

layout(constant_id = 1) const bool NEOX = false;

layout(std430, binding = 0) readonly buffer Dy { float G[]; };
layout(std430, binding = 1) writeonly buffer Dx { float O[]; };
layout(push_constant) uniform Push { uint rows, heads, head_dim, rope_dim, pos; float base; } pc;

void main() {
  const uint half_ = pc.rope_dim / 2u, per_head = half_ + (pc.head_dim - pc.rope_dim);
  const uint t = group_index() * WG + gl_LocalInvocationID.x;
  if (t >= pc.rows * pc.heads * per_head) return;
  const uint head = t / per_head, j = t % per_head, row = head / pc.heads, at = head * pc.head_dim;
  if (j >= half_) {
    O[at + pc.rope_dim + (j - half_)] = G[at + pc.rope_dim + (j - half_)];
    return;
  }
  const float theta = float(pc.pos + row) * pow(pc.base, -2.0 * float(j) / float(pc.rope_dim));
  float s, c;
  sincos_(theta, s, c);
  const uint a = at + (NEOX ? j : 2u * j), b = at + (NEOX ? j + half_ : 2u * j + 1u);
  const float g0 = G[a], g1 = G[b];
  O[a] = g0 * c + g1 * s;
  O[b] = -g0 * s + g1 * c;
}
