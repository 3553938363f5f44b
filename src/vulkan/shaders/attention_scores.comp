#version 450
// Decode attention, step 1 of 3 (Note [Vulkan decode attention], ops.cpp): for query row r, head h (rh =
// r * heads + h) and the chunk of WG positions c, the scaled scores of q (rounded to f16, as the CPU)
// against the f16 cached keys, written to S[rh][t], and the chunk's softmax statistics (max, sum of exp)
// to ML[rh][c]. One workgroup per (chunk, head, row), one invocation per position; chunks past the row's
// position (POS[0] + r: causal) return at once.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Q { float Qv[]; };
layout(std430, binding = 1) readonly buffer KC { uint KCache[]; };  // [slots][kv_row] f16, as pairs
layout(std430, binding = 2) readonly buffer Pos { int POS[]; };
layout(std430, binding = 3) writeonly buffer Sc { float S[]; };     // [heads][n_ctx]
layout(std430, binding = 4) writeonly buffer Ml { float ML[]; };    // [heads][chunks][2]
layout(push_constant) uniform Push {
  uint heads, head_dim, group, kv_row, chunks, launched, n_ctx;  // chunks: ML/O's stride; launched: the grid's
  uint rows;  // query rows: row r at position POS[0] + row0 + r (a prompt's tokens)
  uint row0;  // the first row's index in Q and ATT (the scratch holds rows from 0)
  float scale;
} pc;

shared float q_[256];  // head_dim <= 256

void main() {
  const uint c = group_index() % pc.launched, rh = group_index() / pc.launched;  // rh = row * heads + head
  const uint h = rh % pc.heads, row = rh / pc.heads;
  const uint n = uint(POS[0]) + pc.row0 + row + 1u, t0 = c * WG;
  if (row >= pc.rows || t0 >= n) return;  // uniform over the workgroup
  const uint tid = gl_LocalInvocationID.x, t = t0 + tid, kvh = h / pc.group;
  for (uint d = tid; d < pc.head_dim; d += WG) q_[d] = round_f16(Qv[(pc.row0 * pc.heads + rh) * pc.head_dim + d]);
  barrier();
  float s = -1.0 / 0.0;
  if (t < n) {
    const uint w0 = (t * pc.kv_row + kvh * pc.head_dim) / 2u;
    float dot = 0.0;
    for (uint i = 0u; i < pc.head_dim / 2u; ++i) {
      const vec2 k = unpackHalf2x16(KCache[w0 + i]);
      dot += k.x * q_[2u * i] + k.y * q_[2u * i + 1u];
    }
    s = dot * pc.scale;
    S[rh * pc.n_ctx + t] = s;
  }
  const float m = wg_max(s);
  const float l = wg_sum(t < n ? exp(s - m) : 0.0);
  if (tid == 0u) {
    ML[(rh * pc.chunks + c) * 2u] = m;
    ML[(rh * pc.chunks + c) * 2u + 1u] = l;
  }
}
