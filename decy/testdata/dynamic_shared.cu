// Dynamic shared memory (Note [Dynamic shared memory], decy/glsl.cpp), run by decy_dynamic_shared_test.cpp:
//   block_argmax: one extern __shared__ buffer carved into blockDim.x floats and blockDim.x ints (a helper
//                 writes through the float view); each block's largest x and its first index
//   block_sum:    each block's sum by a tree of `s[t] += s[t + h]` (compound assignments on it)
__device__ void put(float* a, int i, float v) { a[i] = v; }

__global__ void block_argmax(const float* __restrict__ x, int n, float* __restrict__ best, int* __restrict__ where) {
  extern __shared__ float smem[];
  float* vals = smem;
  int* idx = reinterpret_cast<int*>(smem + blockDim.x);
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  put(vals, t, i < n ? x[i] : -__int_as_float(0x7f800000));
  idx[t] = i;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) {
      const float o = vals[t + h];
      const int oi = idx[t + h];
      if (o > vals[t] || (o == vals[t] && oi < idx[t])) {
        vals[t] = o;
        idx[t] = oi;
      }
    }
    __syncthreads();
  }
  if (t == 0) {
    best[blockIdx.x] = vals[0];
    where[blockIdx.x] = idx[0];
  }
}

__global__ void block_sum(const float* __restrict__ x, int n, float* __restrict__ sums) {
  extern __shared__ float s[];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) s[t] += s[t + h];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = s[0];
}
