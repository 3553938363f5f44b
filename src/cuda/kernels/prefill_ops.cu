// The small steps of a prefill batch (T tokens at positions pos0 .. pos0 + T - 1), around the cuBLAS
// products (ops/gemm.h) that do the arithmetic, each as the CPU forward pass computes it
// (realizar/src/model/forward.cpp):
//   cast_f16           the f16 operand of a tensor-core product
//   add_rows           a bias added to every row
//   rope_append_rows   rope of every token's q and k; q as f16 (the attention's operand), k and v
//                      appended to the f16 cache
//   softmax_causal     one row of scores per (token, head): softmax over the positions the token sees,
//                      rounded to f16 (Note [F16 attention]); zeros past it (the mask)
#include "prelude.cuh"

// y[i] = f16(x[i]), grid-stride.
extern "C" __global__ void cast_f16(const float* __restrict__ x, u16* __restrict__ y, u64 n) {
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * blockDim.x)
    y[i] = f32_to_f16_bits(x[i]);
}

// y[r][i] += b[i] for the row r = blockIdx.y.
extern "C" __global__ void add_rows(float* __restrict__ y, const float* __restrict__ b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[static_cast<u64>(blockIdx.y) * n + i] += b[i];
}

// Token t = blockIdx.x at position pos0 + t, one block of 256 threads: the angles' sin and cos once per
// pair index into shared memory (every head of the token shares them), then the heads' pairs (q pairs ->
// q16, k pairs -> the cache), v -> the cache with k's dimensions past rope_dim, and q's past rope_dim ->
// q16; consecutive threads take consecutive pairs and elements. The angle is built as the CPU builds it
// (repeated f32 multiplication). One thread per pair and token, each computing its own sin and cos, ran
// a 512-token 7B chunk at ~1.2 TB/s: 64 heads recomputed every angle.
extern "C" __global__ void __launch_bounds__(256)
    rope_append_rows(const float* __restrict__ qv, const float* __restrict__ kv, const float* __restrict__ vv, int n_head, int n_kv, int hd,
                     int rope_dim, int pos0, float theta_scale, const float* __restrict__ freqs, int neox, u16* __restrict__ q16,
                     u16* __restrict__ kc, u16* __restrict__ vc) {
  const int half = rope_dim / 2, kv_row = n_kv * hd, q_row = n_head * hd, t = blockIdx.x, p = pos0 + t;
  __shared__ float sn[128], cs[128];  // half <= 128: head sizes up to 256
  for (int i = threadIdx.x; i < half; i += blockDim.x) rope_sincos(p, i, theta_scale, freqs, sn[i], cs[i]);
  __syncthreads();
  qv += static_cast<u64>(t) * q_row, q16 += static_cast<u64>(t) * q_row;
  kv += static_cast<u64>(t) * kv_row, vv += static_cast<u64>(t) * kv_row;
  u16* kslot = kc + static_cast<u64>(p) * kv_row;
  const int nq = n_head * half, pairs = nq + n_kv * half;
#pragma unroll 4
  for (int id = threadIdx.x; id < pairs; id += blockDim.x) {
    const bool is_k = id >= nq;
    const int j = is_k ? id - nq : id, h = j / half, i = j % half;
    const float* v = (is_k ? kv : qv) + h * hd;
    u16* out = (is_k ? kslot : q16) + h * hd;
    const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const float x0 = v[a], x1 = v[b];
    out[a] = f32_to_f16_bits(x0 * cs[i] - x1 * sn[i]);
    out[b] = f32_to_f16_bits(x0 * sn[i] + x1 * cs[i]);
  }
#pragma unroll 4
  for (int id = threadIdx.x; id < kv_row; id += blockDim.x) {
    vc[static_cast<u64>(p) * kv_row + id] = f32_to_f16_bits(vv[id]);
    if (id % hd >= rope_dim) kslot[id] = f32_to_f16_bits(kv[id]);
  }
  if (rope_dim < hd)
    for (int id = threadIdx.x; id < q_row; id += blockDim.x)
      if (id % hd >= rope_dim) q16[id] = f32_to_f16_bits(qv[id]);
}

// Row (head h = blockIdx.y, token t = blockIdx.x) of s [n_head][T][n_keys] (scores, already scaled):
// p[j] = f16(exp(s[j] - max) / sum) for the positions j <= pos0 + t the token sees, 0 past them. The CPU's
// order: the max, the sum of the exponentials, one reciprocal, products.
extern "C" __global__ void __launch_bounds__(256)
    softmax_causal(const float* __restrict__ s, u16* __restrict__ p, int n_keys, int pos0) {
  const int t = blockIdx.x, n = min(n_keys, pos0 + t + 1);
  const u64 row = (static_cast<u64>(blockIdx.y) * gridDim.x + t) * n_keys;
  s += row, p += row;
  float m = -__int_as_float(0x7f800000);
  for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, s[j]);
  m = block_max(m);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) sum += expf(s[j] - m);
  const float inv = 1.0f / block_sum(sum);
  for (int j = threadIdx.x; j < n_keys; j += blockDim.x) p[j] = j < n ? f32_to_f16_bits(expf(s[j] - m) * inv) : u16{0};
}
