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

// The decode attention's read pattern over the 8-bit KV copy (attention.cuh, one pass): block (h, b) reads
// rows [256 b, 256 b + 256) of head h, 128 bytes each (8 lanes x 16 bytes, 32 rows per pass, every load
// of the block in flight at once), row j of head h at h * head_stride + j * row_stride (16-byte words).
// [n][heads x 128 bytes] (the copy's layout: row_stride 256, head_stride 8) against [heads][n][128 bytes].
extern "C" __global__ void __launch_bounds__(256)
    bench_read_rows(const uint4* __restrict__ p, u64 head_stride, u32 row_stride, u32 never, u32* out) {
  const int part = threadIdx.x % 8, slot = threadIdx.x / 8;
  const uint4* __restrict__ base = p + blockIdx.x * head_stride;
  uint4 v[8];
#pragma unroll
  for (int u = 0; u < 8; ++u) v[u] = base[static_cast<u64>(blockIdx.y * 256 + slot + 32 * u) * row_stride + part];
  u32 x = 0;
#pragma unroll
  for (int u = 0; u < 8; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  if (x == never) out[blockIdx.x] = x;
}
