// The small per-layer steps of a decode step (one token), each as the CPU forward pass computes it
// (realizar/src/model/forward.cpp): RMSNorm, RoPE, appending k and v to the f16 KV cache, attention
// over the cache (q and the softmax weights rounded to f16, Note [F16 attention]), SwiGLU, residual add.
#include "prelude.cuh"

// out[row] = x[row] * (1 / sqrt(mean(x[row]^2) + eps)) * w; one block of 256 threads per row.
extern "C" __global__ void __launch_bounds__(256)
    rmsnorm(const float* __restrict__ x, const float* __restrict__ w, float eps, float* __restrict__ out, int n) {
  const float* xr = x + static_cast<u64>(blockIdx.x) * n;
  float* yr = out + static_cast<u64>(blockIdx.x) * n;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
  ss = block_sum(ss);
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
  const int half = rope_dim / 2;
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= n_heads * half) return;
  const int h = id / half, i = id % half;
  float theta = static_cast<float>(*pos);
  for (int k = 0; k < i; ++k) theta *= theta_scale;
  if (freqs != nullptr) theta /= freqs[i];
  float sn, cs;
  sincosf(theta, &sn, &cs);
  float* p = v + h * hd;
  const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
  const float x0 = p[a], x1 = p[b];
  p[a] = x0 * cs - x1 * sn;
  p[b] = x0 * sn + x1 * cs;
}

// k, v [n] -> f16 at kc[*pos * n], vc[*pos * n].
extern "C" __global__ void kv_append(const float* __restrict__ k, const float* __restrict__ v, u16* __restrict__ kc,
                                     u16* __restrict__ vc, const int* __restrict__ pos, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  kc[static_cast<u64>(*pos) * n + i] = f32_to_f16_bits(k[i]);
  vc[static_cast<u64>(*pos) * n + i] = f32_to_f16_bits(v[i]);
}

// out[h] = sum_j softmax_j(q_h . k_j * scale) v_j over positions j <= *pos, for head h = blockIdx.x, KV
// head h / group; kc, vc are one layer's cache [n_ctx][kv_row]. Scores live in dynamic shared memory
// (sized by the launcher for the longest context).
extern "C" __global__ void __launch_bounds__(256)
    attention_decode(const float* __restrict__ q, const u16* __restrict__ kc, const u16* __restrict__ vc,
                     float* __restrict__ out, const int* __restrict__ pos, int hd, int group, int kv_row, float scale) {
  extern __shared__ float s[];
  __shared__ float qh[256];
  __shared__ float part[256];
  const int n = *pos + 1;
  const int h = blockIdx.x, kvh = h / group;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, n_warps = blockDim.x >> 5;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qh[d] = round_to_f16(q[h * hd + d]);
  __syncthreads();
  // Scores: a warp per position, lanes across the head (coalesced reads of k_j).
  for (int j = warp; j < n; j += n_warps) {
    const u16* kj = kc + static_cast<u64>(j) * kv_row + kvh * hd;
    float dot = 0.0f;
    for (int d = lane; d < hd; d += 32) dot += f16_to_f32(kj[d]) * qh[d];
    dot = warp_sum(dot);
    if (lane == 0) s[j] = dot * scale;
  }
  __syncthreads();
  float mx = -__int_as_float(0x7f800000);
  for (int j = threadIdx.x; j < n; j += blockDim.x) mx = fmaxf(mx, s[j]);
  mx = block_max(mx);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    s[j] = expf(s[j] - mx);
    sum += s[j];
  }
  sum = block_sum(sum);
  for (int j = threadIdx.x; j < n; j += blockDim.x) s[j] = round_to_f16(s[j] / sum);
  __syncthreads();
  // out = s V: thread (g, d) sums positions g, g + G, ... for dimension d; then the G partials.
  const int groups = max(1, static_cast<int>(blockDim.x) / hd), d = threadIdx.x % hd, g = threadIdx.x / hd;
  if (g < groups) {
    const u16* vd = vc + kvh * hd + d;
    float acc = 0.0f;
    for (int j = g; j < n; j += groups) acc += s[j] * f16_to_f32(vd[static_cast<u64>(j) * kv_row]);
    part[threadIdx.x] = acc;
  }
  __syncthreads();
  for (int dd = threadIdx.x; dd < hd; dd += blockDim.x) {
    float acc = 0.0f;
    for (int gg = 0; gg < groups; ++gg) acc += part[gg * hd + dd];
    out[h * hd + dd] = acc;
  }
}

// g[i] = silu(g[i]) * u[i].
extern "C" __global__ void swiglu(float* __restrict__ g, const float* __restrict__ u, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = g[i];
  g[i] = x / (1.0f + expf(-x)) * u[i];
}

// x[i] += y[i].
extern "C" __global__ void add_inplace(float* __restrict__ x, const float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
