// __ballot_sync (decy_ballot_test.cpp): masks[w] = the lanes of warp w whose x is positive (lanes past n: 0).
__global__ void ballot(const float* __restrict__ x, unsigned* __restrict__ masks, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned m = __ballot_sync(0xffffffffu, i < n && x[i] > 0.0f);
  if ((threadIdx.x & 31) == 0 && i < n) masks[i >> 5] = m;
}
