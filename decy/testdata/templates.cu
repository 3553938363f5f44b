// A kernel template (Note [Template kernels], decy/parse.cpp): the row maxima of x[rows][n], one block of
// kBlock threads per row, a shared-memory tree whose size is the template argument. Two explicit
// instantiations; decy translates each one (decy_template_test.cpp runs them against the CPU).
template <int kBlock, typename T>
__global__ void row_max(const T* __restrict__ x, T* __restrict__ out, int n) {
  __shared__ T part[kBlock];
  const T* row = x + static_cast<long long>(blockIdx.x) * n;
  T m = row[0];
  for (int i = threadIdx.x; i < n; i += kBlock) m = row[i] > m ? row[i] : m;
  part[threadIdx.x] = m;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && part[threadIdx.x + s] > part[threadIdx.x]) part[threadIdx.x] = part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

template __global__ void row_max<256, float>(const float*, float*, int);
template __global__ void row_max<64, int>(const int*, int*, int);
