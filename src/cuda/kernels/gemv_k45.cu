// y[rows] = W x for Q4_K weights (rows of 144-byte blocks, as in the GGUF file) or Q5_K weights (176-byte
// blocks: the same plus qh[32], each element's fifth bit) and Q8_K activations (quantize_q8_k.cu), for
// decode: memory-bound, so each weight byte is read once, with 16-byte loads.
//
// A warp computes kRows rows; 8 lanes share a block (4 blocks per warp step). Lane t of a block loads
// the block's first 16 bytes (d, dmin, the packed scales: one broadcast transaction for the 8 lanes) and
// qs bytes [16t, 16t + 16): 16 low nibbles of sub-block 2c and 16 high nibbles of sub-block 2c + 1
// (c = t / 2), then does 8 dp4a per row against the matching activations (loaded once for the kRows rows).
// Q5_K: the lane also loads qh bytes [16h, 16h + 16) (h = t % 2), whose bits 2c and 2c + 1 are the fifth
// bits of its low and high nibbles (../shared/docs/quant-formats.md).
// kSteps block steps are loaded before any is used, so enough bytes are in flight to cover the memory
// latency. Weights are read with streaming loads (evict first), keeping the activations in cache.
// Block term as on the CPU: dx * (d * sum_j sc_j * (q_j . x_j) - dmin * sum_j m_j * bsum_j), integer parts
// exact; only the order of the float accumulation differs from the CPU.
#include "prelude.cuh"

namespace {
constexpr int kRows = TRUENO_GEMV_ROWS;
#ifndef TRUENO_GEMV_STEPS  // a tuning knob (TRUENO_CUDA_DEFINES, src/cuda/nvrtc.h)
#define TRUENO_GEMV_STEPS 2
#endif
constexpr int kSteps = TRUENO_GEMV_STEPS;
constexpr int kWarps = TRUENO_GEMV_WARPS;  // per thread block (blockDim = 32 x kWarps)

// 16 levels (nibbles at `shift`, plus the fifth bits of hb at bit `bit` when kQ5) . 16 activations.
template <bool kQ5>
__device__ __forceinline__ int dot16(uint4 q, uint4 hb, int shift, int bit, int4 x) {
  const auto level = [&](u32 w, u32 h) {
    u32 v = (w >> shift) & 0x0F0F0F0Fu;
    if (kQ5) v |= ((h >> bit) & 0x01010101u) << 4;
    return static_cast<int>(v);
  };
  int s = __dp4a(level(q.x, hb.x), x.x, 0);
  s = __dp4a(level(q.y, hb.y), x.y, s);
  s = __dp4a(level(q.z, hb.z), x.z, s);
  return __dp4a(level(q.w, hb.w), x.w, s);
}

// Scale and min of sub-block j (0-7) from the packed scales s0 = bytes 0-3, s1 = 4-7, s2 = 8-11
// (the 6-bit layout of ../shared/docs/quant-formats.md), without branches.
__device__ __forceinline__ void scale_min(int j, u32 s0, u32 s1, u32 s2, int& sc, int& m) {
  const int k = 8 * (j & 3);
  const int lo_sc = (s0 >> k) & 63, lo_m = (s1 >> k) & 63;
  const int hi_sc = ((s2 >> k) & 0xF) | (((s0 >> k) >> 6 & 3) << 4);
  const int hi_m = ((s2 >> k) >> 4 & 0xF) | (((s1 >> k) >> 6 & 3) << 4);
  sc = j < 4 ? lo_sc : hi_sc;
  m = j < 4 ? lo_m : hi_m;
}

// One block's term for one row: head = the block's first 16 bytes, q = this lane's 16 qs bytes, hb its
// 16 qh bytes (Q5_K).
template <bool kQ5>
__device__ __forceinline__ float term(uint4 head, uint4 q, uint4 hb, int c, int4 xl, int4 xh, int bsl, int bsh, float dx) {
  int sc0, m0, sc1, m1;
  scale_min(2 * c, head.y, head.z, head.w, sc0, m0);
  scale_min(2 * c + 1, head.y, head.z, head.w, sc1, m1);
  const int isum = sc0 * dot16<kQ5>(q, hb, 0, 2 * c, xl) + sc1 * dot16<kQ5>(q, hb, 4, 2 * c + 1, xh);
  const int msum = m0 * bsl + m1 * bsh;
  const float d = f16_to_f32(static_cast<u16>(head.x & 0xFFFF)), dmin = f16_to_f32(static_cast<u16>(head.x >> 16));
  return dx * (d * static_cast<float>(isum) - dmin * static_cast<float>(msum));
}

template <bool kQ5>
__device__ __forceinline__ void gemv_k45(const GemvTargets& t_, const i8* __restrict__ xq, const float* __restrict__ xd,
                                         const i16* __restrict__ xbs, int nb, int accumulate) {
  constexpr int kBlock = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;  // block bytes, offset of qs
  const u8* __restrict__ w = t_.w[blockIdx.y];
  float* __restrict__ y = t_.y[blockIdx.y];
  const int rows = t_.rows[blockIdx.y];
  const int row0 = (blockIdx.x * kWarps + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, t = lane & 7, c = t >> 1, h = t & 1;
  const u64 row_bytes = static_cast<u64>(nb) * kBlock;
  const u8* wr[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) wr[r] = w + static_cast<u64>(min(row0 + r, rows - 1)) * row_bytes;
  float acc[kRows] = {};
  uint4 head[kSteps][kRows], q[kSteps][kRows], hb[kSteps][kRows];
  const auto load = [&](int b0) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int b = b0 + 4 * s;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (b < nb) {
          head[s][r] = load_weight(reinterpret_cast<const uint4*>(wr[r] + b * kBlock));
          q[s][r] = load_weight(reinterpret_cast<const uint4*>(wr[r] + b * kBlock + kQs + 16 * t));
          hb[s][r] = kQ5 ? load_weight(reinterpret_cast<const uint4*>(wr[r] + b * kBlock + 16 + 16 * h)) : make_uint4(0, 0, 0, 0);
        }
      }
    }
  };
  gemv_wait(false);  // Note [Weights before the wait]
  load(lane >> 3);
  gemv_wait(true);
  for (int b0 = lane >> 3; b0 < nb; b0 += 4 * kSteps) {
    if (b0 != (lane >> 3)) load(b0);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int b = b0 + 4 * s;
      if (b >= nb) break;
#ifdef TRUENO_FAULT_GEMV_SKIP  // test-only fault injection (the parity gate must reject it): one block step skipped
      if (b0 == (lane >> 3) && s == 0) continue;
#endif
      const int e = b * 256 + 64 * c + 16 * h;  // first activation of the low-nibble run
      const int4 xl = *reinterpret_cast<const int4*>(xq + e), xh = *reinterpret_cast<const int4*>(xq + e + 32);
      const int bsl = xbs[e / 16], bsh = xbs[e / 16 + 2];
      const float dx = xd[b];
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] += term<kQ5>(head[s][r], q[s][r], hb[s][r], c, xl, xh, bsl, bsh, dx);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + v : v;
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q4_k(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
              int nb, int accumulate) {
  overlap_launch();
  gemv_k45<false>(t_, xq, xd, xbs, nb, accumulate);
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q5_k(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
              int nb, int accumulate) {
  overlap_launch();
  gemv_k45<true>(t_, xq, xd, xbs, nb, accumulate);
}
