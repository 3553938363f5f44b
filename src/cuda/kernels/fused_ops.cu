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
  overlap_launch();
  const int i = blockIdx.x * 256 + threadIdx.x;
  const float wi = w[i];  // the norm's weights are constant too (Note [Weights before the wait])
  overlap_wait();
  // the block's own value is loaded beside the sum's loads, not after the sum (one round trip fewer)
  const float xi = x[i];
  const float ss = block_sum_squares(x, n);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
  const float v = (xi * scale) * wi;
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

#include "rope_append.cuh"

extern "C" __global__ void rope_append(float* __restrict__ qv, float* __restrict__ kv, const float* __restrict__ vv,
                                       int n_head, int n_kv, int hd, int rope_dim, const int* __restrict__ pos,
                                       float theta_scale, const float* __restrict__ freqs, int neox, u16* __restrict__ kc,
                                       u16* __restrict__ vc) {
  overlap_prologue();
  rope_append_body(qv, kv, vv, n_head, n_kv, hd, rope_dim, *pos, theta_scale, freqs, neox, kc, vc, blockIdx.x * blockDim.x + threadIdx.x);
}
