// f32 activations -> Q8_K blocks on the GPU, the values the CPU computes (quant_q8_k in
// src/quant/quantize_ref.cpp): a = the element of largest magnitude (the first of equals, never NaN),
// q = min(127, rint(x * (-127 / a))), d = 1 / (-127 / a), bsums = sums of each 16 q. Stored as three
// arrays: q[n], d[n / 256], bsums[n / 16]. One thread block of 256 threads per Q8_K block.
#include "prelude.cuh"

extern "C" __global__ void __launch_bounds__(256)
    quantize_q8_k(const float* __restrict__ x, i8* __restrict__ q, float* __restrict__ d, i16* __restrict__ bsums) {
  overlap_prologue();
  quantize_block_q8_k(x[blockIdx.x * 256 + threadIdx.x], q, d, bsums);
}
