// rope + KV append of one token as a device function, shared by the single sequence's kernel
// (fused_ops.cu) and the batched step's (batch_ops.cu): thread id of the token's n_head * half +
// n_kv * half + kv_row threads; p its position.
#pragma once
#include "prelude.cuh"

// Threads [0, n_head * half): q pairs; [.., + n_kv * half): k pairs, whose rotated values also go to the
// cache; [.., + kv_row): v[i] to the cache, and k[i] when its dimension is past rope_dim (not rotated).
__device__ __forceinline__ void rope_append_body(float* __restrict__ qv, float* __restrict__ kv, const float* __restrict__ vv,
                                                 int n_head, int n_kv, int hd, int rope_dim, int p, float theta_scale,
                                                 const float* __restrict__ freqs, int neox, u16* __restrict__ kc,
                                                 u16* __restrict__ vc, int id) {
  const int half = rope_dim / 2, kv_row = n_kv * hd;
  const int nq = n_head * half, nk = n_kv * half;
  u16* kslot = kc + static_cast<u64>(p) * kv_row;
  if (id < nq + nk) {
    const bool is_k = id >= nq;
    if (is_k) id -= nq;
    const int h = id / half, i = id % half;
    float sn, cs;
    rope_sincos(p, i, theta_scale, freqs, sn, cs);
    float* v = (is_k ? kv : qv) + h * hd;
    const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const float x0 = v[a], x1 = v[b];
    const float y0 = x0 * cs - x1 * sn, y1 = x0 * sn + x1 * cs;
    v[a] = y0, v[b] = y1;
    if (is_k) kslot[h * hd + a] = f32_to_f16_bits(y0), kslot[h * hd + b] = f32_to_f16_bits(y1);
    return;
  }
  id -= nq + nk;
  if (id >= kv_row) return;
  vc[static_cast<u64>(p) * kv_row + id] = f32_to_f16_bits(vv[id]);
  if (id % hd >= rope_dim) kslot[id] = f32_to_f16_bits(kv[id]);
}

// rope_append's arithmetic for one q head and its KV head, by one block (rope_dim <= 2 * blockDim.x):
// rotated q to qs (f32), the rotated k and v as f16 to ks, vs, and when `append` also to the cache row kslot,
// vslot. The caller synchronizes before reading qs, ks, vs.
__device__ __forceinline__ void rope_head(const float* __restrict__ qg, const float* __restrict__ kg, const float* __restrict__ vg,
                                          int hd, int rope_dim, int p, float theta_scale, const float* __restrict__ freqs, int neox,
                                          float* qs, u16* ks, u16* vs, u16* kslot, u16* vslot, bool append) {
  const int half = rope_dim / 2, t = threadIdx.x;
  if (t < 2 * half) {
    const bool is_k = t >= half;
    const int i = is_k ? t - half : t;
    float sn, cs;
    rope_sincos(p, i, theta_scale, freqs, sn, cs);
    const float* src = is_k ? kg : qg;
    const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const float x0 = src[a], x1 = src[b];
    const float y0 = x0 * cs - x1 * sn, y1 = x0 * sn + x1 * cs;
    if (is_k) ks[a] = f32_to_f16_bits(y0), ks[b] = f32_to_f16_bits(y1);
    else qs[a] = y0, qs[b] = y1;
  }
  for (int d = rope_dim + t; d < hd; d += blockDim.x) qs[d] = qg[d], ks[d] = f32_to_f16_bits(kg[d]);
  for (int d = t; d < hd; d += blockDim.x) vs[d] = f32_to_f16_bits(vg[d]);
  if (!append) return;
  __syncthreads();
  for (int d = t; d < hd; d += blockDim.x) kslot[d] = ks[d], vslot[d] = vs[d];
}
