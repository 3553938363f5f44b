#version 450
// Decode attention, step 2 of 3: for row and head rh and chunk c, the softmax weights p_t = exp(S[rh][t] -
// M) / L (M, L over every chunk's ML), rounded to f16 as the CPU does, times the f16 cached values: the
// chunk's share of the head's output, O[rh][c][d]. One workgroup per (chunk, head, row).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer VC { uint VCache[]; };  // [slots][kv_row] f16, as pairs
layout(std430, binding = 1) readonly buffer Pos { int POS[]; };
layout(std430, binding = 2) readonly buffer Sc { float S[]; };
layout(std430, binding = 3) readonly buffer Ml { float ML[]; };
layout(std430, binding = 4) writeonly buffer Out { float O[]; };    // [heads][chunks][head_dim]
layout(push_constant) uniform Push {
  uint heads, head_dim, group, kv_row, chunks, launched, n_ctx;  // chunks: ML/O's stride; launched: the grid's
  uint rows;  // query rows: row r at position POS[0] + row0 + r (a prompt's tokens)
  uint row0;  // the first row's index in Q and ATT (the scratch holds rows from 0)
  float scale;
} pc;

shared float p_[WG];

float v_at(uint t, uint col) {  // the cached value at slot t, column col of the row
  const uint i = t * pc.kv_row + col;
  const vec2 pair = unpackHalf2x16(VCache[i / 2u]);
  return (i & 1u) == 0u ? pair.x : pair.y;
}

void main() {
  const uint c = group_index() % pc.launched, rh = group_index() / pc.launched;  // rh = row * heads + head
  const uint h = rh % pc.heads, row = rh / pc.heads;
  const uint n = uint(POS[0]) + pc.row0 + row + 1u, t0 = c * WG;
  if (row >= pc.rows || t0 >= n) return;  // uniform over the workgroup
  const uint tid = gl_LocalInvocationID.x, kvh = h / pc.group, used = (n + WG - 1u) / WG;
  float m = -1.0 / 0.0;
  for (uint k = tid; k < used; k += WG) m = max(m, ML[(rh * pc.chunks + k) * 2u]);
  const float M = wg_max(m);
  float l = 0.0;
  for (uint k = tid; k < used; k += WG) l += ML[(rh * pc.chunks + k) * 2u + 1u] * exp(ML[(rh * pc.chunks + k) * 2u] - M);
  const float L = wg_sum(l);
  const uint t = t0 + tid;
  p_[tid] = t < n ? round_f16(exp(S[rh * pc.n_ctx + t] - M) / L) : 0.0;
  barrier();
  const uint end = min(n - t0, WG);
  for (uint d = tid; d < pc.head_dim; d += WG) {
    float acc = 0.0;
    for (uint j = 0u; j < end; ++j) acc += p_[j] * v_at(t0 + j, kvh * pc.head_dim + d);
    O[(rh * pc.chunks + c) * pc.head_dim + d] = acc;
  }
}
