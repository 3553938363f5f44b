// y[rows] = W x for Q8_0 weights (34-byte blocks: f16 d, 32 int8) and Q8_K activations
// (quantize_q8_k.cu; the CPU pairs Q8_0 weights with Q8_0 activations, so results differ from it by
// the activation rounding only). 4 lanes per weight block, 8 bytes each; a warp step covers 8 blocks =
// one 256-element activation block. Blocks are only 2-byte aligned: weights load as u16 pairs.
#include "prelude.cuh"

namespace {
constexpr int kRows = 2;
constexpr int kWarps = 8;

__device__ __forceinline__ u32 load_u32_a2(const u8* p) {
  const u16* h = reinterpret_cast<const u16*>(p);
  return static_cast<u32>(h[0]) | (static_cast<u32>(h[1]) << 16);
}
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q8_0(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, int nb, int accumulate) {  // nb = cols / 256
  const u8* __restrict__ w = t_.w[blockIdx.y];
  float* __restrict__ y = t_.y[blockIdx.y];
  const int rows = t_.rows[blockIdx.y];
  const int row0 = (blockIdx.x * kWarps + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, blk = lane >> 2, v = lane & 3;
  const u64 row_bytes = static_cast<u64>(nb) * 8 * 34;
  float acc[kRows] = {};
  for (int b = 0; b < nb; ++b) {
    const int2 x = *reinterpret_cast<const int2*>(xq + b * 256 + 32 * blk + 8 * v);
    const float dx = xd[b];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const u8* bw = w + static_cast<u64>(min(row0 + r, rows - 1)) * row_bytes + static_cast<u64>(8 * b + blk) * 34;
      const int s = __dp4a(static_cast<int>(load_u32_a2(bw + 2 + 8 * v)), x.x,
                           __dp4a(static_cast<int>(load_u32_a2(bw + 6 + 8 * v)), x.y, 0));
      acc[r] += f16_to_f32(*reinterpret_cast<const u16*>(bw)) * dx * static_cast<float>(s);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float val = warp_sum(acc[r]);
    if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + val : val;
  }
}
