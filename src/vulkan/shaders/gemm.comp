#version 450
// Y[t][row] (+)= sum_k X[t][k] W[row][k] for a prompt's T activation rows (Note [Vulkan prefill GEMM],
// ops.cpp): the portable f32 path. A workgroup of 256 computes a tile of 64 weight rows x 64 tokens, 4 x 4
// per invocation; per step of 32 columns it dequantizes the weight tile (dequant.glsl) and loads the
// activation tile into shared memory, so each weight is dequantized once per 64 tokens.
// Specialization constants: 0 workgroup size (256), 1 weight type (GGUF id).
#include "common.glsl"

layout(constant_id = 1) const uint TYPE = 0;

layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 1) readonly buffer Act { float X[]; };
layout(std430, binding = 2) buffer Out { float Y[]; };
layout(push_constant) uniform Push {
  uint rows, cols, row_bytes, accumulate, T;
} pc;

#include "dequant.glsl"

const uint BM = 64u, BN = 64u, BK = 32u;
shared float Ws[BK][BM + 1u];
shared float Xs[BK][BN + 1u];

void main() {
  const uint tid = gl_LocalInvocationID.x, m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN;
  const uint tr = tid % 16u, tc = tid / 16u;  // rows 4 tr.., tokens 4 tc..
  const uint lr = tid / 4u, lk = 8u * (tid % 4u);  // the loader's row (or token) and its 8 columns
  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < pc.cols; k0 += BK) {
    float v[8];
    if (m0 + lr < pc.rows) {
      dequant8((m0 + lr) * pc.row_bytes, k0 + lk, v);
    } else {
      for (uint i = 0u; i < 8u; ++i) v[i] = 0.0;
    }
    for (uint i = 0u; i < 8u; ++i) Ws[lk + i][lr] = v[i];
    const bool tok = n0 + lr < pc.T;
    for (uint i = 0u; i < 8u; ++i) {
      const float x = tok ? X[(n0 + lr) * pc.cols + k0 + lk + i] : 0.0;
      Xs[lk + i][lr] = TYPE == 1u ? round_f16(x) : x;  // F16 weights: activations rounded, as the CPU pass
    }
    barrier();
    for (uint k = 0u; k < BK; ++k) {
      float a[4], b[4];
      for (uint i = 0u; i < 4u; ++i) a[i] = Ws[k][4u * tr + i], b[i] = Xs[k][4u * tc + i];
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }
  for (uint j = 0u; j < 4u; ++j) {
    const uint t = n0 + 4u * tc + j;
    if (t >= pc.T) break;
    for (uint i = 0u; i < 4u; ++i) {
      const uint row = m0 + 4u * tr + i;
      if (row >= pc.rows) break;
      const uint at = t * pc.rows + row;
      Y[at] = pc.accumulate != 0u ? Y[at] + acc[i][j] : acc[i][j];
    }
  }
}
