// decy's float atomics (GL_EXT_shader_atomic_float), run by decy_atomics_test.cpp: out[b % 8] += x[i] for
// each element (b its block), a block's sum in a __shared__ float first for out[8 + blockIdx.x], and
// atomicExch of each element into last[0] (what it took out summed into taken[0]: the values plus the
// initial one equal the last one plus every taken one).
__global__ void atomics_float(const float* __restrict__ x, int n, float* __restrict__ out, float* __restrict__ last, float* __restrict__ taken) {
  __shared__ float block_sum;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) block_sum = 0.0f;
  __syncthreads();
  if (i < n) {
    atomicAdd(&out[blockIdx.x % 8], x[i]);
    atomicAdd(&block_sum, x[i]);
    atomicAdd(&taken[0], atomicExch(&last[0], x[i]));
  }
  __syncthreads();
  if (threadIdx.x == 0) out[8 + blockIdx.x] = block_sum;
}
