// f32 activations -> Q8_K blocks on the GPU, the values the CPU computes (quant_q8_k in
// src/quant/quantize_ref.cpp): a = the element of largest magnitude (the first of equals, never NaN),
// q = min(127, rint(x * (-127 / a))), d = 1 / (-127 / a), bsums = sums of each 16 q. Stored as three
// arrays: q[n], d[n / 256], bsums[n / 16]. One thread block of 256 threads per Q8_K block.
#include "prelude.cuh"

__device__ __forceinline__ void keep_larger(float& m, int& idx, float om, int oi) {
  if (om > m || (om == m && oi < idx)) m = om, idx = oi;
}

extern "C" __global__ void __launch_bounds__(256)
    quantize_q8_k(const float* __restrict__ x, i8* __restrict__ q, float* __restrict__ d, i16* __restrict__ bsums) {
  __shared__ float s_mag[8];
  __shared__ int s_idx[8];
  __shared__ float s_a;
  const int b = blockIdx.x, t = threadIdx.x;
  const float v = x[b * 256 + t];
  float m = v != v ? -1.0f : fabsf(v);
  int idx = t;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) keep_larger(m, idx, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, idx, o));
  if ((t & 31) == 0) s_mag[t >> 5] = m, s_idx[t >> 5] = idx;
  __syncthreads();
  if (t < 32) {
    m = t < 8 ? s_mag[t] : -1.0f;
    idx = t < 8 ? s_idx[t] : 1 << 30;
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) keep_larger(m, idx, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, idx, o));
    if (t == 0) s_a = m > 0.0f ? x[b * 256 + idx] : 0.0f;
  }
  __syncthreads();
  const float a = s_a;
  int qi = 0;
  if (a != 0.0f) qi = min(127, __float2int_rn((-127.0f / a) * v));
  q[b * 256 + t] = static_cast<i8>(qi);
  const int s = segment_sum(qi, 16);
  if ((t & 15) == 0) bsums[b * 16 + t / 16] = static_cast<i16>(s);
  if (t == 0) d[b] = a != 0.0f ? 1.0f / (-127.0f / a) : 0.0f;
}
