// Fusions of the small decode steps, each one launch instead of two or three (fewer kernel boundaries
// per token, Note [Decode graph] in realizar/src/model/forward_cuda.cpp):
//   rmsnorm_quantize  xn = rmsnorm(x) * w, then xn -> Q8_K (the GEMV input), one block per Q8_K block
//                     (each block reduces the whole row's sum of squares itself: no second pass)
//   swiglu_quantize   g = silu(g) * u, then g -> Q8_K
//   rope_append       rotates q and k for the position, appends the rotated k and v to the f16 cache
#include "prelude.cuh"

extern "C" __global__ void __launch_bounds__(256)
    rmsnorm_quantize(const float* __restrict__ x, const float* __restrict__ w, float eps, float* __restrict__ xn, int n,
                     i8* __restrict__ q, float* __restrict__ d, i16* __restrict__ bsums) {
  overlap_prologue();
  const float ss = block_sum_squares(x, n);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
  const int i = blockIdx.x * 256 + threadIdx.x;
  const float v = (x[i] * scale) * w[i];
  xn[i] = v;
  quantize_block_q8_k(v, q, d, bsums);
}

extern "C" __global__ void __launch_bounds__(256)
    swiglu_quantize(float* __restrict__ g, const float* __restrict__ u, i8* __restrict__ q, float* __restrict__ d,
                    i16* __restrict__ bsums) {
  overlap_prologue();
  const int i = blockIdx.x * 256 + threadIdx.x;
  const float x = g[i];
  const float v = x / (1.0f + expf(-x)) * u[i];
  g[i] = v;
  quantize_block_q8_k(v, q, d, bsums);
}

// Threads [0, n_head * half): q pairs; [.., + n_kv * half): k pairs, whose rotated values also go to the
// cache; [.., + kv_row): v[i] to the cache, and k[i] when its dimension is past rope_dim (not rotated).
extern "C" __global__ void rope_append(float* __restrict__ qv, float* __restrict__ kv, const float* __restrict__ vv,
                                       int n_head, int n_kv, int hd, int rope_dim, const int* __restrict__ pos,
                                       float theta_scale, const float* __restrict__ freqs, int neox, u16* __restrict__ kc,
                                       u16* __restrict__ vc) {
  overlap_prologue();
  const int half = rope_dim / 2, kv_row = n_kv * hd, p = *pos;
  int id = blockIdx.x * blockDim.x + threadIdx.x;
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
