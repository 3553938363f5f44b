#version 450
// Y[t][row] (+)= sum_k X[t][k] W[row][k] for a prompt's T activation rows on tensor cores (Note [Vulkan
// prefill GEMM], ops.cpp): VK_NV_cooperative_matrix, f16 operands, f32 accumulators. A workgroup of 4
// subgroups computes a tile of 64 weight rows x 64 tokens (128 x 128 tiles measured slower: at 512
// tokens a 7B's 4096-row matrices give 128 workgroups, under one per SM); per step of 64 columns (a
// 32-column tail is zero-filled) it dequantizes the weight tile (dequant.glsl) and converts the
// activation tile to f16 in shared memory, and each subgroup multiplies its 32 x 32 quarter as 16 x CN x 16 matrices. The accumulators go through
// shared memory to the output (bounds checks, the addition): measured faster end to end (7B pp512 1519
// against 1303) than storing whole blocks straight to Y and only the others through shared memory.
// Specialization constants: 0 workgroup size (128: 4 subgroups of 32), 1 weight type (GGUF id), 2 CN
// (the device's coopmat N: 16 or 8).
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"

layout(constant_id = 1) const uint TYPE = 0;
layout(constant_id = 2) const uint CN = 16;

layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 1) readonly buffer Act { float X[]; };
layout(std430, binding = 1) readonly buffer Act4 { vec4 X4[]; };
layout(std430, binding = 2) buffer Out { float Y[]; };
layout(push_constant) uniform Push {
  uint rows, cols, row_bytes, accumulate, T;
} pc;

#include "dequant.glsl"

const uint BM = 64u, BN = 64u, BK = 64u, LD = BK + 8u, NB = 32u / CN, LDC = BM + 4u;
shared float16_t Ws[BM * LD];       // [weight row][k]
shared float16_t Xs[BN * LD];       // [token][k]
shared float Cs[BN * LDC];          // [token][weight row]: the accumulators on their way to Y

void main() {
  const uint tid = gl_LocalInvocationID.x, sg = gl_SubgroupID, st = sg / 2u, sr = sg % 2u;  // 4 subgroups: 2 x 2
  const uint m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN;
  const uint lr = tid / 2u, lk = 32u * (tid % 2u);  // the loader's row (and token) and its 32 columns
  fcoopmatNV<32, gl_ScopeSubgroup, 16, CN> acc[2][NB];
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < NB; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, CN>(0.0);
  for (uint k0 = 0u; k0 < pc.cols; k0 += BK) {
    for (uint h = 0u; h < 4u; ++h) {
      float v[8];
      if (m0 + lr < pc.rows && k0 + lk + 8u * h < pc.cols) {  // zeros past the last column (a 32-column tail)
        dequant8((m0 + lr) * pc.row_bytes, k0 + lk + 8u * h, v);
      } else {
        for (uint i = 0u; i < 8u; ++i) v[i] = 0.0;
      }
      for (uint i = 0u; i < 8u; ++i) Ws[lr * LD + lk + 8u * h + i] = float16_t(v[i]);
    }
    const bool tok = n0 + lr < pc.T;
    for (uint q = 0u; q < 8u; ++q) {
      const vec4 x = tok && k0 + lk + 4u * q < pc.cols ? X4[((n0 + lr) * pc.cols + k0 + lk) / 4u + q] : vec4(0.0);
      for (uint i = 0u; i < 4u; ++i) Xs[lr * LD + lk + 4u * q + i] = float16_t(x[i]);
    }
    barrier();
    for (uint kk = 0u; kk < BK; kk += 16u) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[2];
      for (uint i = 0u; i < 2u; ++i) coopMatLoadNV(a[i], Xs, (st * 32u + 16u * i) * LD + kk, LD, false);
      for (uint j = 0u; j < NB; ++j) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, CN> b;  // W^T: column n is weight row n, its k contiguous
        coopMatLoadNV(b, Ws, (sr * 32u + CN * j) * LD + kk, LD, true);
        for (uint i = 0u; i < 2u; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < NB; ++j) coopMatStoreNV(acc[i][j], Cs, (st * 32u + 16u * i) * LDC + sr * 32u + CN * j, LDC, false);
  barrier();
  for (uint e = tid; e < BN * BM; e += WG) {
    const uint t = n0 + e / BM, row = m0 + e % BM;
    if (t >= pc.T || row >= pc.rows) continue;
    const float v = Cs[(e / BM) * LDC + e % BM];
    Y[t * pc.rows + row] = pc.accumulate != 0u ? Y[t * pc.rows + row] + v : v;
  }
}
