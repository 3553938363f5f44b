#pragma once
// The body of gemv_k45.cu's kernels and of gemv_mixed.cu's.
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
#include "async_copy.cuh"

namespace k45 {
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

// The block's term from its integer sums: dx * (d * isum - dmin * msum), d and dmin the head's f16 pair.
__device__ __forceinline__ float block_term(uint4 head, int isum, int msum, float dx) {
  const float d = f16_to_f32(static_cast<u16>(head.x & 0xFFFF)), dmin = f16_to_f32(static_cast<u16>(head.x >> 16));
  return dx * (d * static_cast<float>(isum) - dmin * static_cast<float>(msum));
}

// One block's term for one row: head = the block's first 16 bytes, q = this lane's 16 qs bytes, hb its
// 16 qh bytes (Q5_K).
template <bool kQ5>
__device__ __forceinline__ float term(uint4 head, uint4 q, uint4 hb, int c, int4 xl, int4 xh, int bsl, int bsh, float dx) {
  int sc0, m0, sc1, m1;
  scale_min(2 * c, head.y, head.z, head.w, sc0, m0);
  scale_min(2 * c + 1, head.y, head.z, head.w, sc1, m1);
  const int isum = sc0 * dot16<kQ5>(q, hb, 0, 2 * c, xl) + sc1 * dot16<kQ5>(q, hb, 4, 2 * c + 1, xh);
  return block_term(head, isum, m0 * bsl + m1 * bsh, dx);
}

// Note [Scales as byte pairs]
// A Q4_K lane's two sub-blocks 2c and 2c + 1 have their scales and mins in adjacent bytes of the packed
// scales (bytes 2c mod 4 and the next of s0 and s1 for c < 2; of s2, with s0's and s1's top bits, for
// c >= 2), so one shift by 16 (c & 1) and masks give both scales as a byte pair and both mins as another,
// and two __dp2a (int16 pairs times byte pairs) give isum and msum: about 15 integer instructions fewer
// a row and block than scale_min twice and four multiplies. The same integers, so the same output bits.
// The high nibbles are dotted in place (dot16_high). Measured on the H200 (2026-12-04, tg128, two rounds):
// 7B Q4_K_M 509.7 / 504.9 tok/s against 499.1 / 499.7 with scale_min; 1.1B 1,582.1 / 1,560.3 against
// 1,553.0 / 1,561.0 (docs/PERFORMANCE.md).
// Q5_K keeps term(): its run sums can pass the int16 range (16 x 31 x 128).
#ifndef TRUENO_GEMV_PAIRS  // a tuning knob (TRUENO_CUDA_DEFINES): 0 keeps scale_min
#define TRUENO_GEMV_PAIRS 1
#endif
#ifndef TRUENO_GEMV_HIGH_IN_PLACE  // a tuning knob: 0 shifts the high nibbles down before the dot
#define TRUENO_GEMV_HIGH_IN_PLACE 1
#endif
// 16 high nibbles . 16 activations. In place, each byte's nibble is 16 x its level (unsigned: dp4a.u32.s32),
// so the sum is 16 x the dot, exactly; one shift instead of one per word.
__device__ __forceinline__ int dot16_high(uint4 q, int4 x) {
  if constexpr (TRUENO_GEMV_HIGH_IN_PLACE) {
    int s = 0;
    const u32 w[4] = {q.x & 0xF0F0F0F0u, q.y & 0xF0F0F0F0u, q.z & 0xF0F0F0F0u, q.w & 0xF0F0F0F0u};
    const int xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) asm("dp4a.u32.s32 %0, %1, %2, %0;" : "+r"(s) : "r"(w[i]), "r"(xs[i]));
    return s >> 4;
  } else {
    return dot16<false>(q, q, 4, 0, x);
  }
}
__device__ __forceinline__ float term_q4_pairs(uint4 head, uint4 q, int c, int4 xl, int4 xh, int bs_pair, float dx) {
  const int sh = 16 * (c & 1);
  const u32 s0 = head.y >> sh, s1 = head.z >> sh, s2 = head.w >> sh;
  const u32 scales = c >= 2 ? (s2 & 0x0F0Fu) | ((s0 >> 2) & 0x3030u) : s0 & 0x3F3Fu;
  const u32 mins = c >= 2 ? ((s2 >> 4) & 0x0F0Fu) | ((s1 >> 2) & 0x3030u) : s1 & 0x3F3Fu;
  const int lo = dot16<false>(q, q, 0, 0, xl), hi = dot16_high(q, xh);  // each within int16: 16 x 15 x 128
  const int isum = __dp2a_lo(static_cast<int>(__byte_perm(lo, hi, 0x5410)), static_cast<int>(scales), 0);
  return block_term(head, isum, __dp2a_lo(bs_pair, static_cast<int>(mins), 0), dx);
}

// Where a GEMV waits for the previous step: the launch's (griddepcontrol, gemv_wait) or a persistent
// kernel's phase (PhaseWait below).
struct LaunchWait {
  __device__ void operator()(bool after) const { gemv_wait(after); }
};

template <bool kQ5, class Wait = LaunchWait>
__device__ __forceinline__ void gemv_k45(const GemvTargets& t_, const i8* __restrict__ xq, const float* __restrict__ xd,
                                         const i16* __restrict__ xbs, int nb, int accumulate, int bx = blockIdx.x, int by = blockIdx.y,
                                         Wait wait = {}) {
  constexpr int kBlock = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;  // block bytes, offset of qs
  const u8* __restrict__ w = t_.w[by];
  float* __restrict__ y = t_.y[by];
  const int rows = t_.rows[by];
  const int row0 = (bx * kWarps + threadIdx.y) * kRows;
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
  wait(false);  // Note [Weights before the wait]
  load(lane >> 3);
  wait(true);
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
      if constexpr (!kQ5 && TRUENO_GEMV_PAIRS) {  // Note [Scales as byte pairs]
        const int bs_pair = static_cast<int>(__byte_perm(bsl, bsh, 0x5410));
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] += term_q4_pairs(head[s][r], q[s][r], c, xl, xh, bs_pair, dx);
      } else {
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] += term<kQ5>(head[s][r], q[s][r], hb[s][r], c, xl, xh, bsl, bsh, dx);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + v : v;
  }
}

// Note [A warp's loads across its row groups]
// gemv_k45 loads kSteps block steps, computes them, then loads the next kSteps: while a warp computes, none
// of its loads are in flight, and when its rows end the warp retires with nothing in flight. Measured on
// the H200 (BM_CudaReadGemv, 2026-12-03), the GEMV's loads alone took 14.8 us over a 7B's gate + up (50.7
// MB) and the GEMV 18.0. Here a warp takes row groups g0, g0 + W, g0 + 2W, ... (W = the grid's warps, a
// grid the launcher sizes to what is resident at once) as one sequence of (group, step) items, and refills
// each row's registers with the item kSteps later as soon as its term has used them, across its groups'
// ends. Each row's terms are added in the same order as gemv_k45 adds them, so y is the same bits (a test
// checks). The items' addresses advance by additions: a first version that divided the item index by the
// steps a group and multiplied out each address ran 20-50% slower than gemv_k45 (its integer work, not its
// loads). Measured on the H200 (2026-12-04, BM_CudaGemvQ4K): 22016 x 4096 17.6 -> 14.9 us (3.4 TB/s, the
// loads' own time), 11008 x 4096 11.1 -> 9.95, 4096 x 14336 14.8 -> 13.4, but 4096 x 4096 (a group a warp,
// 4 steps) 5.20 -> 5.36 alone, though it pays there inside a token: the launcher takes it where it pays
// (k45_rows, ops/gemv.cpp).
template <bool kQ5>
__device__ __forceinline__ void gemv_k45_stream(const GemvTargets& t_, const i8* __restrict__ xq, const float* __restrict__ xd,
                                                const i16* __restrict__ xbs, int nb, int accumulate) {
  constexpr int kBlock = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  const int by = blockIdx.y;
  const u8* __restrict__ w = t_.w[by];
  float* __restrict__ y = t_.y[by];
  const int rows = t_.rows[by];
  const int groups = (rows + kRows - 1) / kRows, stride = gridDim.x * kWarps;
  const int g0 = blockIdx.x * kWarps + threadIdx.y;
  if (g0 >= groups) return;
  const int lane = threadIdx.x, t = lane & 7, c = t >> 1, h = t & 1, lb = lane >> 3;
  const int steps = (nb + 3) / 4;  // a group's block steps: the lane's block of step s is lb + 4 s
  const u64 row_bytes = static_cast<u64>(nb) * kBlock;
  // Each slot's item: its group g and step st (the same across the warp), and the lane's block's bytes in
  // the group's first row, p. Advanced by kSteps items at a time, without divisions.
  int g[kSteps], st[kSteps];
  const u8* p[kSteps];
  uint4 head[kSteps][kRows], q[kSteps][kRows], hb[kSteps][kRows];
  const auto load = [&](int s, int r) {
    const int b = lb + 4 * st[s];
    if (g[s] >= groups || b >= nb || g[s] * kRows + r >= rows) return;  // past the end: the slot is not used
    const u8* pr = p[s] + r * row_bytes;
    head[s][r] = load_weight(reinterpret_cast<const uint4*>(pr));
    q[s][r] = load_weight(reinterpret_cast<const uint4*>(pr + kQs + 16 * t));
    hb[s][r] = kQ5 ? load_weight(reinterpret_cast<const uint4*>(pr + 16 + 16 * h)) : make_uint4(0, 0, 0, 0);
  };
  const auto advance = [&](int s) {  // to the item kSteps later
    st[s] += kSteps;
    p[s] += 4 * kSteps * kBlock;
    while (st[s] >= steps) {
      st[s] -= steps;
      g[s] += stride;
      p[s] += static_cast<u64>(stride) * kRows * row_bytes - static_cast<u64>(4 * steps * kBlock);
    }
  };
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {  // item s
    g[s] = g0 + (s / steps) * stride, st[s] = s % steps;
    p[s] = w + static_cast<u64>(g[s]) * kRows * row_bytes + (lb + 4 * st[s]) * kBlock;
  }
  gemv_wait(false);
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
#pragma unroll
    for (int r = 0; r < kRows; ++r) load(s, r);
  gemv_wait(true);
  float acc[kRows] = {};
  for (bool more = true; more;) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if (g[s] >= groups) {  // items run in order: every later one is past the end too
        more = false;
        break;
      }
      const int b = lb + 4 * st[s], gs = g[s], sts = st[s];
      advance(s);
      if (b < nb) {
        const int e = b * 256 + 64 * c + 16 * h;
        const int4 xl = *reinterpret_cast<const int4*>(xq + e), xh = *reinterpret_cast<const int4*>(xq + e + 32);
        const int bsl = xbs[e / 16], bsh = xbs[e / 16 + 2];
        const float dx = xd[b];
        const int bs_pair = static_cast<int>(__byte_perm(bsl, bsh, 0x5410));
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if constexpr (!kQ5 && TRUENO_GEMV_PAIRS) acc[r] += term_q4_pairs(head[s][r], q[s][r], c, xl, xh, bs_pair, dx);
          else acc[r] += term<kQ5>(head[s][r], q[s][r], hb[s][r], c, xl, xh, bsl, bsh, dx);
          load(s, r);  // the row's registers, free now, take its item kSteps later
        }
      } else {
#pragma unroll
        for (int r = 0; r < kRows; ++r) load(s, r);
      }
      if (sts == steps - 1) {  // the group's last step: its rows are done
        const int row0 = gs * kRows;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const float v = warp_sum(acc[r]);
          if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + v : v;
          acc[r] = 0.0f;
        }
      }
    }
  }
}

}  // namespace k45
