// y[rows] = W x for 32-element block formats and Q8_K activations (quantize_q8_k.cu):
//   Q8_0: 34-byte blocks (f16 d, 32 int8), w = d * q
//   Q4_0: 18-byte blocks (f16 d, 16 bytes: element j in the low nibble of byte j, element j + 16 in the
//         high one), w = d * (q - 8); the -8 goes through the activation sums (bsums)
// The CPU pairs these with Q8_0 activations (32-element scales), so results differ from it by the
// activation rounding. 4 lanes per weight block; a warp step covers 8 blocks = one 256-element
// activation block. Blocks are only 2-byte aligned: weights load as u16 pairs.
#include "prelude.cuh"

namespace {
constexpr int kRows = TRUENO_GEMV_ROWS;
constexpr int kWarps = TRUENO_GEMV_WARPS;

__device__ __forceinline__ u32 load_u32_a2(const u8* p) {
  const u16* h = reinterpret_cast<const u16*>(p);
  return static_cast<u32>(h[0]) | (static_cast<u32>(h[1]) << 16);
}

// Lane v's part of block term from its quant words q0, q1: the integer dot of its 8 elements (Q8_0: bytes
// 2 + 8 v .. + 7) or of its 4 + 4 (Q4_0: bytes 2 + 4 v .. + 3; q1 unused).
template <bool kQ4>
__device__ __forceinline__ int lane_dot(u32 q0, u32 q1, int v, const i8* xb, const i16* bs) {
  if (!kQ4) {
    const int2 x = *reinterpret_cast<const int2*>(xb + 8 * v);
    return __dp4a(static_cast<int>(q0), x.x, __dp4a(static_cast<int>(q1), x.y, 0));
  }
  const int lo = __dp4a(static_cast<int>(q0 & 0x0F0F0F0Fu), *reinterpret_cast<const int*>(xb + 4 * v), 0);
  const int hi = __dp4a(static_cast<int>((q0 >> 4) & 0x0F0F0F0Fu), *reinterpret_cast<const int*>(xb + 16 + 4 * v), 0);
  return lo + hi - (v == 0 ? 8 * (bs[0] + bs[1]) : 0);
}

// Activation blocks in flight per warp: the weights of kAhead steps are loaded before any is used, so a
// lane has kAhead x kRows x 3 loads outstanding instead of 3 (a 4096-wide row is only 16 steps).
constexpr int kAhead = 4;

template <bool kQ4>
__device__ __forceinline__ void gemv_b32(const GemvTargets& t_, const i8* __restrict__ xq, const float* __restrict__ xd,
                                         const i16* __restrict__ xbs, int nb, int accumulate) {  // nb = cols / 256
  constexpr int kBlock = kQ4 ? 18 : 34;
  const u8* __restrict__ w = t_.w[blockIdx.y];
  float* __restrict__ y = t_.y[blockIdx.y];
  const int rows = t_.rows[blockIdx.y];
  const int row0 = (blockIdx.x * kWarps + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, blk = lane >> 2, v = lane & 3;
  const u64 row_bytes = static_cast<u64>(nb) * 8 * kBlock;
  const u8* wr[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) wr[r] = w + static_cast<u64>(min(row0 + r, rows - 1)) * row_bytes + static_cast<u64>(blk) * kBlock;
  float acc[kRows] = {};
  for (int b0 = 0; b0 < nb; b0 += kAhead) {
    u32 q0[kAhead][kRows], q1[kAhead][kRows];
    u16 dw[kAhead][kRows];
#pragma unroll
    for (int s = 0; s < kAhead; ++s) {
      const int b = min(b0 + s, nb - 1);  // past the row: a repeated step, not accumulated
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const u8* bw = wr[r] + static_cast<u64>(b) * 8 * kBlock;
        dw[s][r] = *reinterpret_cast<const u16*>(bw);
        q0[s][r] = load_u32_a2(bw + 2 + (kQ4 ? 4 : 8) * v);
        q1[s][r] = kQ4 ? 0u : load_u32_a2(bw + 6 + 8 * v);
      }
    }
#pragma unroll
    for (int s = 0; s < kAhead; ++s) {
      const int b = b0 + s;
      if (b >= nb) break;
      const i8* xb = xq + b * 256 + 32 * blk;
      const i16* bs = xbs + b * 16 + 2 * blk;
      const float dx = xd[b];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        acc[r] += f16_to_f32(dw[s][r]) * dx * static_cast<float>(lane_dot<kQ4>(q0[s][r], q1[s][r], v, xb, bs));
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float val = warp_sum(acc[r]);
    if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + val : val;
  }
}
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q8_0(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs, int nb,
              int accumulate) {
  overlap_prologue();
  gemv_b32<false>(t_, xq, xd, xbs, nb, accumulate);
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q4_0(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs, int nb,
              int accumulate) {
  overlap_prologue();
  gemv_b32<true>(t_, xq, xd, xbs, nb, accumulate);
}
