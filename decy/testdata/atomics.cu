// decy's 32-bit integer atomics (atomicMin/Max/Add/Or/And/Xor/Exch/CAS on buffers, atomicAdd on __shared__),
// run by decy_atomics_test.cpp against what any order of the threads gives:
//   out[0] min, out[1] max, out[2] sum of (x & 255), bits[0] OR, bits[1] AND of complements, bits[2] XOR;
//   out[3]: claimed by exactly one thread (atomicCAS from -1), which adds 1 to out[4];
//   out[5]: every thread exchanges its index in, adding what it took out to out[6];
//   out[7]: each block's count of its threads, summed in __shared__ first.
__global__ void atomics(const int* __restrict__ x, int n, int* __restrict__ out, unsigned* __restrict__ bits) {
  __shared__ int block_count;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  if (i < n) {
    const int v = x[i];
    atomicMin(&out[0], v);
    atomicMax(&out[1], v);
    atomicAdd(&out[2], v & 255);
    atomicOr(&bits[0], 1u << (v & 31));
    atomicAnd(&bits[1], ~(1u << (v & 31)));
    atomicXor(&bits[2], static_cast<unsigned>(v));
    if (atomicCAS(&out[3], -1, i) == -1) atomicAdd(&out[4], 1);
    const int old = atomicExch(&out[5], i);
    atomicAdd(&out[6], old);
    atomicAdd(&block_count, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(&out[7], block_count);
}
