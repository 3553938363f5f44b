// y[rows] = W x for Q6_K weights (210-byte blocks as in the GGUF file: ql[128], qh[64], int8 scales[16],
// f16 d) and Q8_K activations (quantize_q8_k.cu). 8 lanes per block, 4 blocks per warp step, kRows rows
// per warp sharing the activation loads. Blocks are only 2-byte aligned, so weights load as u16 pairs.
// Lane t: half hh = t / 4 (128 elements), u = t % 4: elements l = 8u..8u+7 of the four 32-runs
// (l, l + 32, l + 64, l + 96) of that half, whose 6-bit levels are (quant-formats.md):
//   run 0: ql[l] & 15 | (qh[l] & 3) << 4      run 1: ql[l + 32] & 15 | (qh[l] >> 2 & 3) << 4
//   run 2: ql[l] >> 4 | (qh[l] >> 4 & 3) << 4 run 3: ql[l + 32] >> 4 | (qh[l] >> 6 & 3) << 4
// with scale sc[8hh + u / 2 + 2 * run]. Term: d * dx * sum_runs sc * (q . x - 32 * sum x), exact integers.
#include "prelude.cuh"

namespace {
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

__device__ __forceinline__ void load_lane(const u8* bw, int hh, int u, Lane& L) {
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
}  // namespace

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

extern "C" __global__ void __launch_bounds__(32 * kWarps, TRUENO_Q6K_MIN_BLOCKS)
    gemv_q6_k(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, int nb, int accumulate) {
  overlap_launch();
  const u8* __restrict__ w = t_.w[blockIdx.y];
  float* __restrict__ y = t_.y[blockIdx.y];
  const int rows = t_.rows[blockIdx.y];
  const int row0 = (blockIdx.x * kWarps + threadIdx.y) * kRows;
  if (row0 >= rows) return;
  const int lane = threadIdx.x, t = lane & 7, hh = t >> 2, u = t & 3;
  const u64 row_bytes = static_cast<u64>(nb) * 210;
  const u8* wr[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) wr[r] = w + static_cast<u64>(min(row0 + r, rows - 1)) * row_bytes;
  const auto step = [&](int b, float* acc, const Lane* L) {  // L: the step's kRows lanes, or null to load them
    const int e = b * 256 + 128 * hh + 8 * u;
    int2 x[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) x[r] = *reinterpret_cast<const int2*>(xq + e + 32 * r);
    const float dx = xd[b];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      Lane own;
      if (L == nullptr) load_lane(wr[r] + static_cast<u64>(b) * 210, hh, u, own);
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
      if (b < nb) load_lane(wr[r] + static_cast<u64>(b) * 210, hh, u, pre[s][r]);
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
