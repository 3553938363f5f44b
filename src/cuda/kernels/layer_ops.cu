// The small per-layer steps of a decode step (one token), each as the CPU forward pass computes it
// (realizar/src/model/forward.cpp): RMSNorm, RoPE, appending k and v to the f16 KV cache, attention
// over the cache (q and the softmax weights rounded to f16, Note [F16 attention]), SwiGLU, residual add.
#include "prelude.cuh"

// out[row] = x[row] * (1 / sqrt(mean(x[row]^2) + eps)) * w; one block of 256 threads per row.
extern "C" __global__ void __launch_bounds__(256)
    rmsnorm(const float* __restrict__ x, const float* __restrict__ w, float eps, float* __restrict__ out, int n) {
  overlap_prologue();
  const float* xr = x + static_cast<u64>(blockIdx.x) * n;
  float* yr = out + static_cast<u64>(blockIdx.x) * n;
  const float ss = block_sum_squares(xr, n);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = (xr[i] * scale) * w[i];
}

// Positions come from device memory (*pos), so that one captured CUDA graph serves every decode step.
//
// Rotates the first rope_dim values of each of n_heads heads (head size hd) by theta_i = pos *
// theta_scale^i, the angle built by repeated f32 multiplication as on the CPU, divided by freqs[i] when
// freqs is not null; pairs (2i, 2i + 1), or (i, i + rope_dim / 2) when neox. One thread per (head, i).
extern "C" __global__ void rope(float* __restrict__ v, int n_heads, int hd, int rope_dim, const int* __restrict__ pos,
                                float theta_scale, const float* __restrict__ freqs, int neox) {
  overlap_prologue();
  const int half = rope_dim / 2;
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= n_heads * half) return;
  const int h = id / half, i = id % half;
  float sn, cs;
  rope_sincos(*pos, i, theta_scale, freqs, sn, cs);
  float* p = v + h * hd;
  const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
  const float x0 = p[a], x1 = p[b];
  p[a] = x0 * cs - x1 * sn;
  p[b] = x0 * sn + x1 * cs;
}

// k, v [n] -> f16 at kc[*pos * n], vc[*pos * n].
extern "C" __global__ void kv_append(const float* __restrict__ k, const float* __restrict__ v, u16* __restrict__ kc,
                                     u16* __restrict__ vc, const int* __restrict__ pos, int n) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  kc[static_cast<u64>(*pos) * n + i] = f32_to_f16_bits(k[i]);
  vc[static_cast<u64>(*pos) * n + i] = f32_to_f16_bits(v[i]);
}

// Decode attention, split over the sequence (flash-decoding style) so that every SM has work: positions
// come in chunks of kChunk, one block per (head, chunk), three kernels:
//   attention_scores    s[h][j] = (f16(q_h) . k_j) * scale for the chunk; the chunk's max m and
//                       sum l of exp(s - m)
//   attention_weights_v M = max m, L = sum l * exp(m - M) over the chunks; p_j = f16(exp(s_j - M) / L)
//                       (the CPU's rounded weights, Note [F16 attention]); o[h][chunk] = sum p_j v_j
//   attention_combine   out[h] = sum over chunks of o[h][chunk]
// for head h = blockIdx.x (KV head h / group) over positions j <= *pos of one layer's cache [n_ctx][kv_row].
// Scratch: s [n_head][n_ctx], ml [n_head][n_chunks][2], o [n_head][n_chunks][hd].
constexpr int kChunk = 64;

extern "C" __global__ void __launch_bounds__(256)
    attention_scores(const float* __restrict__ q, const u16* __restrict__ kc, const int* __restrict__ pos, int hd, int group,
                     int kv_row, float scale, int n_ctx, float* __restrict__ s, float* __restrict__ ml) {
  overlap_prologue();
  const int n = *pos + 1, h = blockIdx.x, chunk = blockIdx.y, j0 = chunk * kChunk;
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
  if (t == 0) ml[(h * gridDim.y + chunk) * 2] = m, ml[(h * gridDim.y + chunk) * 2 + 1] = l;
}

extern "C" __global__ void __launch_bounds__(256)
    attention_weights_v(const u16* __restrict__ vc, const int* __restrict__ pos, int hd, int group, int kv_row, int n_ctx,
                        const float* __restrict__ s, const float* __restrict__ ml, float* __restrict__ o) {
  overlap_prologue();
  const int n = *pos + 1, h = blockIdx.x, chunk = blockIdx.y, j0 = chunk * kChunk;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kChunk), kvh = h / group, n_chunks = (n + kChunk - 1) / kChunk, t = threadIdx.x;
  const float* mlh = ml + h * gridDim.y * 2;
  const float mt = t < n_chunks ? mlh[2 * t] : -__int_as_float(0x7f800000);
  const float M = block_max(mt);
  const float L = block_sum(t < n_chunks ? mlh[2 * t + 1] * expf(mt - M) : 0.0f);
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
    o[(static_cast<u64>(h) * gridDim.y + chunk) * hd + dd] = acc;
  }
}

extern "C" __global__ void attention_combine(const float* __restrict__ o, const int* __restrict__ pos, int hd, int max_chunks,
                                             float* __restrict__ out) {
  overlap_prologue();
  const int n = *pos + 1, h = blockIdx.x, n_chunks = (n + kChunk - 1) / kChunk;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int c = 0; c < n_chunks; ++c) acc += o[(static_cast<u64>(h) * max_chunks + c) * hd + d];
    out[h * hd + d] = acc;
  }
}

// g[i] = silu(g[i]) * u[i].
extern "C" __global__ void swiglu(float* __restrict__ g, const float* __restrict__ u, int n) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = g[i];
  g[i] = x / (1.0f + expf(-x)) * u[i];
}

// x[i] += y[i].
extern "C" __global__ void add_inplace(float* __restrict__ x, const float* __restrict__ y, int n) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
