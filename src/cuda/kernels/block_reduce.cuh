// The block reduction of the tensor modules (tensor_ops.cu, grad_ops.cu), launched with 256 threads per block.
#pragma once

// The sum (or max) over a block of 256 threads, returned to every thread.
__device__ __forceinline__ float block_reduce(float v, bool is_max) {
  __shared__ float part[8];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  float r = part[0];
  for (int i = 1; i < 8; ++i) r = is_max ? fmaxf(r, part[i]) : r + part[i];
  return r;
}
