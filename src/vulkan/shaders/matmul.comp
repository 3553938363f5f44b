#version 450
// C[m][n] = op(A) op(B) (+ C when beta is 1), f32 row-major, any sizes: ops::matmul (no transposes) and
// grad::matmul (dA = dC B^T, dB = A^T dC) on device tensors (src/vulkan/tensor_ops.cpp). op(A) = A^T when
// trans_a (A stored k x m), op(B) = B^T when trans_b (B stored n x k). A workgroup of 256 invocations (specialization constant 0 must be 256)
// computes a 64 x 64 tile of C, 4 x 4 outputs per invocation, staging a 16-deep slice of A (64 x 16) and
// B (16 x 64) in shared memory per step. f32 accumulation in k order.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer A { float Av[]; };
layout(std430, binding = 1) readonly buffer B { float Bv[]; };
layout(std430, binding = 2) buffer C { float Cv[]; };
layout(push_constant) uniform Push { uint m, n, k, trans_a, trans_b; float beta; } pc;

const uint TILE = 64u, TK = 16u;
shared float As[TK][TILE];  // As[kk][row]
shared float Bs[TK][TILE];  // Bs[kk][col]

void main() {
  const uint t = gl_LocalInvocationID.x, tx = t % 16u, ty = t / 16u;
  const uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < pc.k; k0 += TK) {
    for (uint e = t; e < TILE * TK; e += 256u) {
      const uint r = e / TK, kk = e % TK;  // A: consecutive invocations read along k
      const uint gr = row0 + r, gk = k0 + kk;
      As[kk][r] = gr < pc.m && gk < pc.k ? Av[pc.trans_a != 0u ? gk * pc.m + gr : gr * pc.k + gk] : 0.0;
      const uint br = e / TILE, bc = e % TILE;  // B: along n
      const uint gbk = k0 + br, gc = col0 + bc;
      Bs[br][bc] = gbk < pc.k && gc < pc.n ? Bv[pc.trans_b != 0u ? gc * pc.k + gbk : gbk * pc.n + gc] : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < TK; ++kk) {
      float a[4], b[4];
      for (uint i = 0u; i < 4u; ++i) a[i] = As[kk][ty * 4u + i];
      for (uint j = 0u; j < 4u; ++j) b[j] = Bs[kk][tx + 16u * j];
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }
  for (uint i = 0u; i < 4u; ++i) {
    const uint r = row0 + ty * 4u + i;
    if (r >= pc.m) continue;
    for (uint j = 0u; j < 4u; ++j) {
      const uint c = col0 + tx + 16u * j;
      if (c < pc.n) Cv[r * pc.n + c] = pc.beta != 0.0 ? Cv[r * pc.n + c] + acc[i][j] : acc[i][j];
    }
  }
}
