// y[rows] = W x for 32-element block formats and Q8_K activations (quantize_q8_k.cu):
//   Q8_0: 34-byte blocks (f16 d, 32 int8), w = d * q
//   Q4_0: 18-byte blocks (f16 d, 16 bytes: element j in the low nibble of byte j, element j + 16 in the
//         high one), w = d * (q - 8); the -8 goes through the activation sums (bsums)
// The CPU pairs these with Q8_0 activations (32-element scales), so results differ from it by the
// activation rounding. 4 lanes per weight block; a warp step covers 8 blocks = one 256-element
// activation block.
//
// Note [Staged 2-byte-aligned blocks]
// The blocks are only 2-byte aligned (34 and 18 bytes): a lane's quants read as u16 pairs straight from
// global memory scatter every warp load over the step's 272 bytes. A step's 8 blocks are contiguous and
// 16-byte aligned as a whole (rows of nb x 8 blocks: multiples of 272 or 144 bytes), so the warp loads
// them with 16-byte loads (17 or 9 lanes, one instruction), stores them to shared memory, and each lane
// reads its words from there (two aligned words and a funnel shift where its quants start at 2 mod 4);
// the next kAhead steps' loads are issued before this group's arithmetic. Measured on the H200 (4096 x
// 11008 Q8_0, 48 MB, 1 row per warp): u16 loads 28.8 us, staged 29.5 us, staged and pipelined 26.5 us
// (1.83 TB/s, 60% of a read stream of that size): fewer load instructions alone changed nothing, the
// pipelining 8%; 7B Q8_0 decode 225 -> 241 tok/s. Later (2026-12-02, 7B Q8_0 tg128, two interleaved
// rounds): rows per warp x steps ahead 1 x 4 (the old default) 254.0 / 254.9, 2 x 2 274.4 / 273.2, 3 x 2
// 278.3 / 278.1 and 280.0 / 279.2, 3 x 3 249.5, 3 x 1 231.1, 4 x 2 229.5, 4 x 1 231.8, 2 x 1 252.2: rows
// share each warp's activation loads, and two steps ahead keep the registers low.
#include "prelude.cuh"

#ifndef TRUENO_GEMV_ROWS_B32  // rows per warp of these kernels (the launcher reads the same knob)
#define TRUENO_GEMV_ROWS_B32 3
#endif

namespace {
constexpr int kRows = TRUENO_GEMV_ROWS_B32;
constexpr int kWarps = TRUENO_GEMV_WARPS;

// The u32 at byte offset `at` (even) of a warp's staged step in shared memory.
__device__ __forceinline__ u32 staged_u32(const u32* words, int at) {
  const u32 lo = words[at >> 2], hi = words[(at >> 2) + 1];
  return __funnelshift_r(lo, hi, (at & 3) * 8);
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

// Activation steps in flight per warp: the weights of kAhead steps are loaded before any is used.
#ifndef TRUENO_GEMV_AHEAD_B32
#define TRUENO_GEMV_AHEAD_B32 2
#endif
constexpr int kAhead = TRUENO_GEMV_AHEAD_B32;

template <bool kQ4>
__device__ __forceinline__ void gemv_b32(const GemvTargets& t_, const i8* __restrict__ xq, const float* __restrict__ xd,
                                         const i16* __restrict__ xbs, int nb, int accumulate) {  // nb = cols / 256
  constexpr int kBlock = kQ4 ? 18 : 34, kStep = 8 * kBlock, kPieces = kStep / 16;  // 16-byte pieces per step
  // + 1: a funnel shift may read one word past the step; a multiple of 4 keeps every step 16-byte aligned
  constexpr int kWords = (kStep / 4 + 1 + 3) / 4 * 4;
  __shared__ __align__(16) u32 staged[kWarps][kAhead][kRows][kWords];
  const u8* __restrict__ w = t_.w[blockIdx.y];
  float* __restrict__ y = t_.y[blockIdx.y];
  const int rows = t_.rows[blockIdx.y];
  const int row0 = (blockIdx.x * kWarps + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, blk = lane >> 2, v = lane & 3;
  const u64 row_bytes = static_cast<u64>(nb) * kStep;
  const u8* wr[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) wr[r] = w + static_cast<u64>(min(row0 + r, rows - 1)) * row_bytes;
  const int at_d = kBlock * blk, at_q = at_d + 2 + (kQ4 ? 4 : 8) * v;
  float acc[kRows] = {};
  // The next kAhead steps' loads are issued before this group's arithmetic (software pipelining): the
  // registers go to shared memory first, so one set of them suffices.
  uint4 raw[kAhead][kRows];
  const auto load = [&](int from) {
#pragma unroll
    for (int s = 0; s < kAhead; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (lane < kPieces) raw[s][r] = load_weight(reinterpret_cast<const uint4*>(wr[r] + static_cast<u64>(min(from + s, nb - 1)) * kStep) + lane);
  };
  gemv_wait(false);  // Note [Weights before the wait]
  load(0);
  gemv_wait(true);
  for (int b0 = 0; b0 < nb; b0 += kAhead) {
    __syncwarp();  // the previous group's reads of staged are done
#pragma unroll
    for (int s = 0; s < kAhead; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (lane < kPieces) reinterpret_cast<uint4*>(staged[threadIdx.y][s][r])[lane] = raw[s][r];
    __syncwarp();
    if (b0 + kAhead < nb) load(b0 + kAhead);
#pragma unroll
    for (int s = 0; s < kAhead; ++s) {
      const int b = b0 + s;
      if (b >= nb) break;
      const i8* xb = xq + b * 256 + 32 * blk;
      const i16* bs = xbs + b * 16 + 2 * blk;
      const float dx = xd[b];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const u32* words = staged[threadIdx.y][s][r];
        const u16 dw = static_cast<u16>(staged_u32(words, at_d) & 0xFFFFu);
        const u32 q0 = staged_u32(words, at_q), q1 = kQ4 ? 0u : staged_u32(words, at_q + 4);
        acc[r] += f16_to_f32(dw) * dx * static_cast<float>(lane_dot<kQ4>(q0, q1, v, xb, bs));
      }
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
  overlap_launch();
  gemv_b32<false>(t_, xq, xd, xbs, nb, accumulate);
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q4_0(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs, int nb,
              int accumulate) {
  overlap_launch();
  gemv_b32<true>(t_, xq, xd, xbs, nb, accumulate);
}

// Note [Q8_0 rows split for the GPU]
// In the file a Q8_0 row is nb32 blocks of 34 bytes (f16 d, 32 int8), 2-byte aligned, which costs the
// staged kernel above a shared-memory round trip and ~10 memory instructions per 272 bytes. Uploaded
// matrices can instead hold each row split (repack_q8_0_split below): the row's 32 x nb32 quants, then its
// nb32 scales, same size and row stride, so quants are 16-byte aligned and a warp reads 512 contiguous
// bytes per row with one load (each lane 16 quants = half a block, the block's d a 2-byte load shared by
// the lane pair). kRowsS rows per warp, kAheadS 512-column steps in flight. Measured on the H200
// (2026-12-03, BM_CudaGemv, staged -> split): 4096 x 4096 15.8 -> 7.3 us, 11008 x 4096 20.4 -> 16.8,
// 4096 x 11008 39.3 -> 20.3 (the staged kernel's 4096-row matrices waited on 8 or 22 round trips per warp);
// 7B Q8_0 decode tg128 290-292 -> 352-360 tok/s at 2 x 4, 363-374 at 3 x 4, 377 at 4 x 4 (2 x 2 323,
// 1 x 4 343, 2 x 6 355, 2 x 8 346, 3 x 3 363, 4 x 3 370).
#ifndef TRUENO_Q8S_ROWS
#define TRUENO_Q8S_ROWS 4
#endif
#ifndef TRUENO_Q8S_AHEAD
#define TRUENO_Q8S_AHEAD 4
#endif
namespace {
constexpr int kRowsS = TRUENO_Q8S_ROWS, kAheadS = TRUENO_Q8S_AHEAD;
}  // namespace

// nb = cols / 256; xbs is unused (the launcher passes gemv_q8_0's parameters).
extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q8_0_split(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
                    int nb, int accumulate) {
  overlap_launch();
  const u8* __restrict__ w = t_.w[blockIdx.y];
  float* __restrict__ y = t_.y[blockIdx.y];
  const int rows = t_.rows[blockIdx.y];
  const int row0 = (blockIdx.x * kWarps + threadIdx.y) * kRowsS;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, cols = 256 * nb, steps = (nb + 1) / 2;
  const u64 row_bytes = static_cast<u64>(nb) * 272;
  const u8* wr[kRowsS];
#pragma unroll
  for (int r = 0; r < kRowsS; ++r) wr[r] = w + static_cast<u64>(min(row0 + r, rows - 1)) * row_bytes;
  float acc[kRowsS] = {};
  uint4 q[kAheadS][kRowsS];
  u16 d[kAheadS][kRowsS];
  const auto load = [&](int s0) {
#pragma unroll
    for (int a = 0; a < kAheadS; ++a) {
      const int col = (s0 + a) * 512 + 16 * lane;
#pragma unroll
      for (int r = 0; r < kRowsS; ++r)
        if (col < cols) {
          q[a][r] = load_weight(reinterpret_cast<const uint4*>(wr[r] + col));
          d[a][r] = load_weight(reinterpret_cast<const u16*>(wr[r] + cols + 2 * (col / 32)));
        }
    }
  };
  gemv_wait(false);  // Note [Weights before the wait]
  load(0);
  gemv_wait(true);
  for (int s0 = 0; s0 < steps; s0 += kAheadS) {
    if (s0 != 0) load(s0);
#pragma unroll
    for (int a = 0; a < kAheadS; ++a) {
      const int col = (s0 + a) * 512 + 16 * lane;
      if (col >= cols) break;
      const int4 x = *reinterpret_cast<const int4*>(xq + col);
      const float dx = xd[col / 256];
#pragma unroll
      for (int r = 0; r < kRowsS; ++r) {
        const uint4 v = q[a][r];
        const int s = __dp4a(static_cast<int>(v.x), x.x, __dp4a(static_cast<int>(v.y), x.y,
                      __dp4a(static_cast<int>(v.z), x.z, __dp4a(static_cast<int>(v.w), x.w, 0))));
        acc[r] += f16_to_f32(d[a][r]) * dx * static_cast<float>(s);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsS; ++r) {
    const float val = warp_sum(acc[r]);
    if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + val : val;
  }
}
