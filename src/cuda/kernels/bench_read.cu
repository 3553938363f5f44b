// Benchmark yardstick, not an op: streams n 16-byte words once (read-only), so its time is the device's
// read bandwidth for the GEMV kernels to be measured against. Writes one word per block only if the
// XOR of what it read is a given value, so the loads cannot be optimized away.
#include "prelude.cuh"

__device__ __forceinline__ u64 clock64_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void __launch_bounds__(256) bench_read(const uint4* __restrict__ p, u64 n, u32 never, u32* out) {
  u32 x = 0;
  for (u64 i = blockIdx.x * 256ull + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * 256ull) {
    const uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == never) out[blockIdx.x] = x;
}

// Keeps the GPU busy for about `ns` nanoseconds, so that launches queued behind it run back to back and
// events around them time the kernels, not the host's launch rate.
extern "C" __global__ void bench_spin(u64 ns) {
  const u64 start = clock64_ns();
  while (clock64_ns() - start < ns) {
  }
}
