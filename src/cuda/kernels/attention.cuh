// The decode attention's three steps as device functions (Note in layer_ops.cu), shared by the single
// sequence's kernels (layer_ops.cu) and the batched step's (batch_ops.cu): one body, so a sequence's
// attention is the same arithmetic alone or in a batch. n = positions attended (pos + 1); grid_chunks =
// the chunks launched (the stride of the scratch's chunk dimension).
#pragma once
#include "prelude.cuh"

constexpr int kChunk = 64;

__device__ __forceinline__ void attention_scores_body(const float* __restrict__ q, const u16* __restrict__ kc, int n, int h, int chunk,
                                                      int grid_chunks, int hd, int group, int kv_row, float scale, int n_ctx,
                                                      float* __restrict__ s, float* __restrict__ ml) {
  const int j0 = chunk * kChunk;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kChunk), kvh = h / group;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, n_warps = blockDim.x >> 5;
  __shared__ float qh[256];
  __shared__ float sc[kChunk];
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qh[d] = round_to_f16(q[h * hd + d]);
  __syncthreads();
  for (int j = j0 + warp; j < j1; j += n_warps) {
    const u16* kj = kc + static_cast<u64>(j) * kv_row + kvh * hd;
    float dot = 0.0f;
    for (int d = lane; d < hd; d += 32) dot += f16_to_f32(kj[d]) * qh[d];
    dot = warp_sum(dot);
    if (lane == 0) sc[j - j0] = dot * scale;
  }
  __syncthreads();
  const int t = threadIdx.x;
  const float v = t < j1 - j0 ? sc[t] : -__int_as_float(0x7f800000);
  const float m = block_max(v);
  const float l = block_sum(t < j1 - j0 ? expf(v - m) : 0.0f);
  if (t < j1 - j0) s[static_cast<u64>(h) * n_ctx + j0 + t] = v;
  if (t == 0) ml[(h * grid_chunks + chunk) * 2] = m, ml[(h * grid_chunks + chunk) * 2 + 1] = l;
}

__device__ __forceinline__ void attention_weights_v_body(const u16* __restrict__ vc, int n, int h, int chunk, int grid_chunks, int hd,
                                                         int group, int kv_row, int n_ctx, const float* __restrict__ s,
                                                         const float* __restrict__ ml, float* __restrict__ o) {
  const int j0 = chunk * kChunk;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kChunk), kvh = h / group, n_chunks = (n + kChunk - 1) / kChunk, t = threadIdx.x;
  // The second level: M and L over every chunk, each thread reducing a stride of them (more chunks than
  // threads past blockDim x kChunk positions).
  const float* mlh = ml + h * grid_chunks * 2;
  float mt = -__int_as_float(0x7f800000);
  for (int c = t; c < n_chunks; c += blockDim.x) mt = fmaxf(mt, mlh[2 * c]);
  const float M = block_max(mt);
  float lt = 0.0f;
  for (int c = t; c < n_chunks; c += blockDim.x) lt += mlh[2 * c + 1] * expf(mlh[2 * c] - M);
  const float L = block_sum(lt);
  __shared__ float p[kChunk];
  __shared__ float part[256];
  if (t < j1 - j0) p[t] = round_to_f16(expf(s[static_cast<u64>(h) * n_ctx + j0 + t] - M) / L);
  __syncthreads();
  const int groups = max(1, static_cast<int>(blockDim.x) / hd), d = t % hd, g = t / hd;
  if (g < groups) {
    const u16* vd = vc + kvh * hd + d;
    float acc = 0.0f;
    for (int j = j0 + g; j < j1; j += groups) acc += p[j - j0] * f16_to_f32(vd[static_cast<u64>(j) * kv_row]);
    part[t] = acc;
  }
  __syncthreads();
  for (int dd = t; dd < hd; dd += blockDim.x) {
    float acc = 0.0f;
    for (int gg = 0; gg < groups; ++gg) acc += part[gg * hd + dd];
    o[(static_cast<u64>(h) * grid_chunks + chunk) * hd + dd] = acc;
  }
}

__device__ __forceinline__ void attention_combine_body(const float* __restrict__ o, int n, int h, int hd, int max_chunks,
                                                       float* __restrict__ out) {
  const int n_chunks = (n + kChunk - 1) / kChunk;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int c = 0; c < n_chunks; ++c) acc += o[(static_cast<u64>(h) * max_chunks + c) * hd + d];
    out[h * hd + d] = acc;
  }
}

