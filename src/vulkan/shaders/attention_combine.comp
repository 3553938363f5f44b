#version 450
// Decode attention, step 3 of 3: the head's output, the sum of its chunks' shares (already normalized
// by the global softmax sum). One workgroup per (head, row).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Pos { int POS[]; };
layout(std430, binding = 1) readonly buffer Parts { float O[]; };  // [heads][chunks][head_dim]
layout(std430, binding = 2) writeonly buffer Out { float ATT[]; }; // [heads][head_dim]
layout(push_constant) uniform Push {
  uint heads, head_dim, group, kv_row, chunks, launched, n_ctx;  // chunks: ML/O's stride; launched: the grid's
  uint rows;  // query rows: row r at position POS[0] + row0 + r (a prompt's tokens)
  uint row0;  // the first row's index in Q and ATT (the scratch holds rows from 0)
  float scale;
} pc;

void main() {
  const uint rh = group_index(), row = rh / pc.heads;  // rh = row * heads + head
  if (row >= pc.rows) return;
  const uint used = (uint(POS[0]) + pc.row0 + row + WG) / WG;  // chunks of WG positions covering the row's pos + 1
  for (uint d = gl_LocalInvocationID.x; d < pc.head_dim; d += WG) {
    float acc = 0.0;
    for (uint k = 0u; k < used; ++k) acc += O[(rh * pc.chunks + k) * pc.head_dim + d];
    ATT[(pc.row0 * pc.heads + rh) * pc.head_dim + d] = acc;
  }
}
