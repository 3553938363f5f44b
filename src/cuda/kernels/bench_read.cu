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

// The Q4_K decode GEMV's read pattern (gemv_k45.cu as committed: 2 warps per block, 4 rows per warp, 8
// lanes per 144-byte block, 2 steps of 4 blocks in flight, streaming loads) over `rows` x nb blocks, with
// the arithmetic replaced by an XOR: how fast those loads alone go. layout 0: row-major (the file's
// [row][block]); 1: block-major ([block][row]: every warp at step s reads one contiguous stretch); 2: the
// same bytes per warp, but each row's step read as 32 lanes x 16 contiguous bytes (no 16-byte head loads).
extern "C" __global__ void __launch_bounds__(64)
    bench_read_gemv(const u8* __restrict__ w, int rows, int nb, int layout, u32 never, u32* out) {
  constexpr int kRows = 4, kSteps = 2, kBlock = 144;
  const int row0 = (blockIdx.x * 2 + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, t = lane & 7;
  const auto at = [&](int r, int b, int off) -> const uint4* {
    const u64 row = static_cast<u64>(min(row0 + r, rows - 1));
    const u64 block = layout == 1 ? static_cast<u64>(b) * rows + row : row * nb + b;
    return reinterpret_cast<const uint4*>(w + block * kBlock + off);
  };
  u32 x = 0;
  for (int b0 = lane >> 3; b0 < nb; b0 += 4 * kSteps) {
    uint4 head[kSteps][kRows], q[kSteps][kRows];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int b = b0 + 4 * s;
        if (b < nb) {
          if (layout == 2) {  // 4 blocks = 576 bytes: lanes 0-31 read bytes [16 lane, +16), lanes 0-3 the last 64
            const int first = b - (lane >> 3);
            head[s][r] = load_weight(at(r, first, 16 * lane));
            q[s][r] = lane < 4 ? load_weight(at(r, first, 512 + 16 * lane)) : make_uint4(0, 0, 0, 0);
          } else {
            head[s][r] = load_weight(at(r, b, 0));
            q[s][r] = load_weight(at(r, b, 16 + 16 * t));
          }
        } else {
          head[s][r] = q[s][r] = make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r) x ^= head[s][r].x ^ head[s][r].w ^ q[s][r].x ^ q[s][r].y ^ q[s][r].z ^ q[s][r].w;
  }
  if (x == never) out[blockIdx.x] = x;
}
