#pragma once
// The body of gemv_q6_k.cu's kernels and of gemv_mixed.cu's.
// y[rows] = W x for Q6_K weights (210-byte blocks as in the GGUF file: ql[128], qh[64], int8 scales[16],
// f16 d) and Q8_K activations (quantize_q8_k.cu). 8 lanes per block, 4 blocks per warp step, kRows rows
// per warp sharing the activation loads. Blocks are only 2-byte aligned, so weights load as u16 pairs.
// Lane t: half hh = t / 4 (128 elements), u = t % 4: elements l = 8u..8u+7 of the four 32-runs
// (l, l + 32, l + 64, l + 96) of that half, whose 6-bit levels are (quant-formats.md):
//   run 0: ql[l] & 15 | (qh[l] & 3) << 4      run 1: ql[l + 32] & 15 | (qh[l] >> 2 & 3) << 4
//   run 2: ql[l] >> 4 | (qh[l] >> 4 & 3) << 4 run 3: ql[l + 32] >> 4 | (qh[l] >> 6 & 3) << 4
// with scale sc[8hh + u / 2 + 2 * run]. Term: d * dx * sum_runs sc * (q . x - 32 * sum x), exact integers.
#include "prelude.cuh"

namespace q6k {
#ifndef TRUENO_Q6K_ROWS  // rows per warp (a tuning knob)
#define TRUENO_Q6K_ROWS 2
#endif
constexpr int kRows = TRUENO_Q6K_ROWS;
constexpr int kWarps = TRUENO_GEMV_WARPS;
#ifndef TRUENO_Q6K_UNROLL  // block steps unrolled (loads of later steps issued early)
#define TRUENO_Q6K_UNROLL 2
#endif
constexpr int kUnroll = TRUENO_Q6K_UNROLL;

__device__ __forceinline__ u32 load_u32_a2(const u8* p) {  // 2-byte aligned
  const u16* h = reinterpret_cast<const u16*>(p);
  return static_cast<u32>(load_weight(h)) | (static_cast<u32>(load_weight(h + 1)) << 16);
}

struct Lane {
  u32 a0, a1, b0, b1, h0, h1;  // ql run bytes l.., ql bytes l+32.., qh bytes
  int sc[4];
  float d;
};

// Block i of a matrix of n blocks: in the file's layout (bw = the block), or in planes (Note [Q6_K planes
// for the GPU] below; bw = the matrix).
template <bool kPlanes>
__device__ __forceinline__ void load_lane(const u8* bw, u64 i, u64 n, int hh, int u, Lane& L) {
  if constexpr (kPlanes) {
    const uint2 a = load_weight(reinterpret_cast<const uint2*>(bw + 128 * i + 64 * hh + 8 * u));
    const uint2 b = load_weight(reinterpret_cast<const uint2*>(bw + 128 * i + 64 * hh + 32 + 8 * u));
    const uint2 h = load_weight(reinterpret_cast<const uint2*>(bw + 128 * n + 64 * i + 32 * hh + 8 * u));
    const uint2 sc = load_weight(reinterpret_cast<const uint2*>(bw + 192 * n + 16 * i + 8 * hh));
    L.a0 = a.x, L.a1 = a.y, L.b0 = b.x, L.b1 = b.y, L.h0 = h.x, L.h1 = h.y;
#pragma unroll
    for (int r = 0; r < 4; ++r) {  // scale bytes u / 2 + 2 r of the eight
      const int at = u / 2 + 2 * r;
      L.sc[r] = static_cast<int>(static_cast<signed char>(((at < 4 ? sc.x : sc.y) >> (8 * (at & 3))) & 0xFF));
    }
    L.d = f16_to_f32(load_weight(reinterpret_cast<const u16*>(bw + 208 * n) + i));
  } else {
    const u8* ql = bw + 64 * hh + 8 * u;
    const u8* qh = bw + 128 + 32 * hh + 8 * u;
    L.a0 = load_u32_a2(ql), L.a1 = load_u32_a2(ql + 4);
    L.b0 = load_u32_a2(ql + 32), L.b1 = load_u32_a2(ql + 36);
    L.h0 = load_u32_a2(qh), L.h1 = load_u32_a2(qh + 4);
    const i8* sc = reinterpret_cast<const i8*>(bw + 192 + 8 * hh + u / 2);
#pragma unroll
    for (int r = 0; r < 4; ++r) L.sc[r] = load_weight(sc + 2 * r);
    L.d = f16_to_f32(load_weight(reinterpret_cast<const u16*>(bw + 208)));
  }
}

__device__ __forceinline__ int run_dot(u32 w0, u32 w1, int2 x, int sc) {
  const int qx = __dp4a(static_cast<int>(w0), x.x, __dp4a(static_cast<int>(w1), x.y, 0));
  const int sx = __dp4a(0x01010101, x.x, __dp4a(0x01010101, x.y, 0));
  return sc * (qx - 32 * sx);
}

__device__ __forceinline__ float term(const Lane& L, const int2 x[4], float dx) {
  const u32 m = 0x0F0F0F0Fu, hm = 0x30303030u;
  int s = run_dot((L.a0 & m) | ((L.h0 << 4) & hm), (L.a1 & m) | ((L.h1 << 4) & hm), x[0], L.sc[0]);
  s += run_dot((L.b0 & m) | ((L.h0 << 2) & hm), (L.b1 & m) | ((L.h1 << 2) & hm), x[1], L.sc[1]);
  s += run_dot(((L.a0 >> 4) & m) | (L.h0 & hm), ((L.a1 >> 4) & m) | (L.h1 & hm), x[2], L.sc[2]);
  s += run_dot(((L.b0 >> 4) & m) | ((L.h0 >> 2) & hm), ((L.b1 >> 4) & m) | ((L.h1 >> 2) & hm), x[3], L.sc[3]);
  return L.d * dx * static_cast<float>(s);
}


// Block steps whose weights are loaded before the wait (Note [Weights before the wait]); the rest go
// through the loop below. Measured on the H200 (7B Q4_K_M decode, tg128): 1 step 371 tok/s, 2 steps 394,
// 4 steps 415 (the LM head's 4096 columns are then loaded whole).
#ifndef TRUENO_Q6K_PRE
#define TRUENO_Q6K_PRE 4
#endif
constexpr int kPre = TRUENO_Q6K_PRE;

// Blocks per SM to compile for (0: the compiler's choice). The register count sets how many blocks are
// resident, and so how many weight bytes are in flight: at 142 registers (3 blocks) 7B decode ran 388
// tok/s on the H200, at 128 (4 blocks) 415.
#ifndef TRUENO_Q6K_MIN_BLOCKS
#define TRUENO_Q6K_MIN_BLOCKS 0
#endif

// Note [Q6_K planes for the GPU]
// A Q6_K block (210 bytes: ql[128], qh[64], scales[16], d) is only 2-byte aligned in the file, so each lane
// above loads its 8 + 8 + 8 bytes of levels, 4 scales and d with 17 narrow loads (Nsight Compute on the H200:
// L1 throughput 80%, 76% of the sectors asked for excess). Uploaded matrices can instead hold the n blocks'
// parts in four planes: every ql (128 i), then every qh (128 n + 64 i), the scales (192 n + 16 i), the d's
// (208 n + 2 i); the same size, and a lane's parts are 8-byte aligned: 5 loads (repack_q6_k_split in
// dequant_f16.cu). Measured on the H200 (2026-12-03, tg128, two rounds): 7B Q4_K_M 504.8 / 501.6 tok/s
// against 481.6 / 481.7 in the file's layout; 1.1B 1,535.3 / 1,552.2 against 1,535.1 / 1,539.1.
template <bool kPlanes>
__device__ __forceinline__ void gemv_q6k(const GemvTargets& t_, const i8* __restrict__ xq, const float* __restrict__ xd, int nb,
                                         int accumulate, int bx = blockIdx.x, int by = blockIdx.y) {
  const u8* __restrict__ w = t_.w[by];
  float* __restrict__ y = t_.y[by];
  const int rows = t_.rows[by];
  const int row0 = (bx * kWarps + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, t = lane & 7, hh = t >> 2, u = t & 3;
  const u64 n = static_cast<u64>(rows) * nb;
  u64 first[kRows];  // each row's first block
#pragma unroll
  for (int r = 0; r < kRows; ++r) first[r] = static_cast<u64>(min(row0 + r, rows - 1)) * nb;
  const auto load = [&](int r, int b, Lane& L) {
    const u64 i = first[r] + b;
    load_lane<kPlanes>(kPlanes ? w : w + i * 210, i, n, hh, u, L);
  };
  const auto step = [&](int b, float* acc, const Lane* L) {  // L: the step's kRows lanes, or null to load them
    const int e = b * 256 + 128 * hh + 8 * u;
    int2 x[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) x[r] = *reinterpret_cast<const int2*>(xq + e + 32 * r);
    const float dx = xd[b];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      Lane own;
      if (L == nullptr) load(r, b, own);
      acc[r] += term(L != nullptr ? L[r] : own, x, dx);
    }
  };
  float acc[kRows] = {};
  Lane pre[kPre][kRows];
  gemv_wait(false);
#pragma unroll
  for (int s = 0; s < kPre; ++s) {
    const int b = (lane >> 3) + 4 * s;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (b < nb) load(r, b, pre[s][r]);
  }
  gemv_wait(true);
#pragma unroll
  for (int s = 0; s < kPre; ++s) {
    const int b = (lane >> 3) + 4 * s;
    if (b < nb) step(b, acc, pre[s]);
  }
#pragma unroll kUnroll
  for (int b = (lane >> 3) + 4 * kPre; b < nb; b += 4) step(b, acc, nullptr);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0 && row0 + r < rows) y[row0 + r] = accumulate ? y[row0 + r] + v : v;
  }
}
}  // namespace q6k
