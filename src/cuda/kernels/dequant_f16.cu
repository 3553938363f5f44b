// Weights as stored in the file -> f16 rows, for the cuBLAS GEMMs of prefill (the tensor cores read f16):
// out[r][c] = f16(the value the CPU decoder computes in f32), bit for bit. The f32 arithmetic follows the
// CPU decoders' order (src/cpu/kernels/qdequant/qdequant_impl.h) with explicitly rounded operations, so
// no contraction into fused multiply-adds changes a value. Eight elements per thread (grid-stride).
#include "prelude.cuh"

namespace {

__device__ __forceinline__ void scale_min_bytes(int j, const u8* s, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63, m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Element j (0-255) of a Q4_K (kQ5 false) or Q5_K block: d0 = d * sc, min0 = dmin * m, y = d0 * q - min0.
template <bool kQ5>
__device__ __forceinline__ float k45(const u8* b, int j) {
  const u8* scales = b + 4;
  const u8* qs = b + (kQ5 ? 48 : 16);
  const int c = j / 64, within = j % 64, hi = within >= 32, l = within % 32, sub = 2 * c + hi;
  int q = hi ? qs[32 * c + l] >> 4 : qs[32 * c + l] & 0xF;
  if (kQ5) q += ((b[16 + l] >> sub) & 1) << 4;
  int sc, m;
  scale_min_bytes(sub, scales, sc, m);
  const float d = f16_to_f32(*reinterpret_cast<const u16*>(b)), dmin = f16_to_f32(*reinterpret_cast<const u16*>(b + 2));
  return __fsub_rn(__fmul_rn(__fmul_rn(d, static_cast<float>(sc)), static_cast<float>(q)), __fmul_rn(dmin, static_cast<float>(m)));
}

// Element j of a Q6_K block: (d * sc) * (q - 32). The block's parts: ql[128], qh[64], scales[16] (i8), d
// (f16): consecutive in the file, in four planes when split (Note [Q6_K planes for the GPU], gemv_q6_k.cu).
__device__ __forceinline__ float q6k(const u8* qlb, const u8* qhb, const u8* scb, const u8* db, int j) {
  const int half = j / 128, jj = j % 128, run = jj / 32, l = jj % 32;
  const u8* ql = qlb + 64 * half;
  const u8 h = qhb[32 * half + l];
  const int lo = run & 1 ? ql[l + 32] : ql[l];
  const int q = ((run < 2 ? lo & 0xF : lo >> 4) | (((h >> (2 * run)) & 3) << 4)) - 32;
  const float d = f16_to_f32(static_cast<u16>(db[0] | (db[1] << 8)));
  const float sc = static_cast<float>(reinterpret_cast<const i8*>(scb)[8 * half + l / 16 + 2 * run]);
  return __fmul_rn(__fmul_rn(d, sc), static_cast<float>(q));
}

// Eight consecutive elements per thread, stored as one 16-byte write (a row's width is a multiple of 8
// for every block format; float rows of other widths take one element per thread). decode8(r, c, v)
// writes elements c .. c + 7 of row r (c a multiple of 8: they share a block's sub-block, so its scales
// are read once). 32-bit index arithmetic: the launcher checks that rows * cols fits.
template <class Decode8, class Decode>
__device__ __forceinline__ void each_element(u16* out, int rows, int cols, Decode8 decode8, Decode decode) {
  const u32 stride = gridDim.x * blockDim.x;
  if (cols % 8 == 0) {
    const u32 per_row = static_cast<u32>(cols) / 8, n = static_cast<u32>(rows) * per_row;
    for (u32 g = blockIdx.x * blockDim.x + threadIdx.x; g < n; g += stride) {
      const int r = static_cast<int>(g / per_row), c = static_cast<int>(g % per_row) * 8;
      float v[8];
      decode8(r, c, v);
      u32 h[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) h[i] = f32_to_f16_bits(v[2 * i]) | (static_cast<u32>(f32_to_f16_bits(v[2 * i + 1])) << 16);
      *reinterpret_cast<uint4*>(out + static_cast<u64>(g) * 8) = make_uint4(h[0], h[1], h[2], h[3]);
    }
    return;
  }
  const u32 n = static_cast<u32>(rows) * static_cast<u32>(cols);
  for (u32 e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride)
    out[e] = f32_to_f16_bits(decode(static_cast<int>(e / static_cast<u32>(cols)), static_cast<int>(e % static_cast<u32>(cols))));
}

// decode8 from an element decoder (formats with no shared scale work worth hoisting).
template <class Decode>
__device__ __forceinline__ void each_element(u16* out, int rows, int cols, Decode decode) {
  each_element(
      out, rows, cols,
      [&](int r, int c, float* v) {
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = decode(r, c + i);
      },
      decode);
}

// Elements j0 .. j0 + 7 (j0 a multiple of 8) of a Q4_K (kQ5 false) or Q5_K block, as k45 computes each:
// one sub-block, so d * sc and dmin * m once, and the 8 quant bytes as one 8-byte load (blocks of 144 and
// 176 bytes keep 16-byte alignment).
template <bool kQ5>
__device__ __forceinline__ void k45_8(const u8* b, int j0, float* v) {
  const int c = j0 / 64, within = j0 % 64, hi = within >= 32, l0 = within % 32, sub = 2 * c + hi;
  int sc, m;
  scale_min_bytes(sub, b + 4, sc, m);
  const float d = f16_to_f32(*reinterpret_cast<const u16*>(b)), dmin = f16_to_f32(*reinterpret_cast<const u16*>(b + 2));
  const float dsc = __fmul_rn(d, static_cast<float>(sc)), dm = __fmul_rn(dmin, static_cast<float>(m));
  const uint2 qs = *reinterpret_cast<const uint2*>(b + (kQ5 ? 48 : 16) + 32 * c + l0);
  uint2 qh;
  if (kQ5) qh = *reinterpret_cast<const uint2*>(b + 16 + l0);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const u32 byte = ((i < 4 ? qs.x : qs.y) >> (8 * (i % 4))) & 0xFF;
    int q = hi ? byte >> 4 : byte & 0xF;
    if (kQ5) q += ((((i < 4 ? qh.x : qh.y) >> (8 * (i % 4))) >> sub) & 1) << 4;
    v[i] = __fsub_rn(__fmul_rn(dsc, static_cast<float>(q)), dm);
  }
}

// Elements j0 .. j0 + 7 of a Q6_K block (parts as q6k), as q6k computes each: one scale, d * sc once
// (blocks of 210 bytes are only 2-byte aligned: byte loads).
__device__ __forceinline__ void q6k_8(const u8* qlb, const u8* qhb, const u8* scb, const u8* db, int j0, float* v) {
  const int half = j0 / 128, jj = j0 % 128, run = jj / 32, l0 = jj % 32;
  const u8* ql = qlb + 64 * half + (run & 1 ? 32 : 0) + l0;
  const u8* qh = qhb + 32 * half + l0;
  const float d = f16_to_f32(static_cast<u16>(db[0] | (db[1] << 8)));
  const float dsc = __fmul_rn(d, static_cast<float>(reinterpret_cast<const i8*>(scb)[8 * half + l0 / 16 + 2 * run]));
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int lo = ql[i];
    const int q = ((run < 2 ? lo & 0xF : lo >> 4) | (((qh[i] >> (2 * run)) & 3) << 4)) - 32;
    v[i] = __fmul_rn(dsc, static_cast<float>(q));
  }
}

}  // namespace

extern "C" __global__ void dequant_q4_k_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 rb = static_cast<u64>(cols / 256) * 144;
  each_element(
      out, rows, cols, [&](int r, int c, float* v) { k45_8<false>(w + r * rb + (c / 256) * 144, c % 256, v); },
      [&](int r, int c) { return k45<false>(w + r * rb + (c / 256) * 144, c % 256); });
}

extern "C" __global__ void dequant_q5_k_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 rb = static_cast<u64>(cols / 256) * 176;
  each_element(
      out, rows, cols, [&](int r, int c, float* v) { k45_8<true>(w + r * rb + (c / 256) * 176, c % 256, v); },
      [&](int r, int c) { return k45<true>(w + r * rb + (c / 256) * 176, c % 256); });
}

extern "C" __global__ void dequant_q6_k_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 rb = static_cast<u64>(cols / 256) * 210;
  each_element(
      out, rows, cols,
      [&](int r, int c, float* v) {
        const u8* b = w + r * rb + (c / 256) * 210;
        q6k_8(b, b + 128, b + 192, b + 208, c % 256, v);
      },
      [&](int r, int c) {
        const u8* b = w + r * rb + (c / 256) * 210;
        return q6k(b, b + 128, b + 192, b + 208, c % 256);
      });
}

// Q6_K in planes (Note [Q6_K planes for the GPU], gemv_q6_k.cu): block i's parts at 128 i, 128 n + 64 i,
// 192 n + 16 i, 208 n + 2 i (n = rows x blocks per row).
extern "C" __global__ void dequant_q6_ks_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 nb = static_cast<u64>(cols / 256), n = static_cast<u64>(rows) * nb;
  each_element(
      out, rows, cols,
      [&](int r, int c, float* v) {
        const u64 i = r * nb + c / 256;
        q6k_8(w + 128 * i, w + 128 * n + 64 * i, w + 192 * n + 16 * i, w + 208 * n + 2 * i, c % 256, v);
      },
      [&](int r, int c) {
        const u64 i = r * nb + c / 256;
        return q6k(w + 128 * i, w + 128 * n + 64 * i, w + 192 * n + 16 * i, w + 208 * n + 2 * i, c % 256);
      });
}

// Not a dequantization: a Q6_K matrix in the file's layout (src) -> planes (dst), one thread per 210-byte
// block; dst and src must not overlap.
extern "C" __global__ void repack_q6_k_split(const u8* __restrict__ src, u8* __restrict__ dst, int rows, int nb) {
  const u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x, n = static_cast<u64>(rows) * nb;
  if (i >= n) return;
  const u16* s = reinterpret_cast<const u16*>(src + i * 210);
  u16* ql = reinterpret_cast<u16*>(dst + 128 * i);
  u16* qh = reinterpret_cast<u16*>(dst + 128 * n + 64 * i);
  u16* sc = reinterpret_cast<u16*>(dst + 192 * n + 16 * i);
  for (int k = 0; k < 64; ++k) ql[k] = s[k];
  for (int k = 0; k < 32; ++k) qh[k] = s[64 + k];
  for (int k = 0; k < 8; ++k) sc[k] = s[96 + k];
  reinterpret_cast<u16*>(dst + 208 * n)[i] = s[104];
}

// Q8_0: q * d.
extern "C" __global__ void dequant_q8_0_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 rb = static_cast<u64>(cols / 32) * 34;
  each_element(out, rows, cols, [&](int r, int c) {
    const u8* b = w + r * rb + (c / 32) * 34;
    return __fmul_rn(static_cast<float>(reinterpret_cast<const i8*>(b + 2)[c % 32]), f16_to_f32(*reinterpret_cast<const u16*>(b)));
  });
}

// Q8_0 rows split (Note [Q8_0 rows split for the GPU], gemv_q8_0.cu): a row's quants, then its scales.
extern "C" __global__ void dequant_q8_0s_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 rb = static_cast<u64>(cols / 32) * 34;
  each_element(out, rows, cols, [&](int r, int c) {
    const u8* row = w + r * rb;
    const u16 d = reinterpret_cast<const u16*>(row + cols)[c / 32];
    return __fmul_rn(static_cast<float>(reinterpret_cast<const i8*>(row)[c]), f16_to_f32(d));
  });
}

// Not a dequantization: a Q8_0 matrix in the file's layout (src) -> rows split (dst, Note [Q8_0 rows split
// for the GPU], gemv_q8_0.cu), one thread per 34-byte block; dst and src must not overlap.
extern "C" __global__ void repack_q8_0_split(const u8* __restrict__ src, u8* __restrict__ dst, int rows, int nb32) {
  const u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<u64>(rows) * nb32) return;
  const u64 r = i / nb32, b = i % nb32, row_bytes = static_cast<u64>(nb32) * 34;
  const u16* s = reinterpret_cast<const u16*>(src + i * 34);
  u32 words[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) words[k] = static_cast<u32>(s[1 + 2 * k]) | (static_cast<u32>(s[2 + 2 * k]) << 16);
  uint4* q = reinterpret_cast<uint4*>(dst + r * row_bytes + 32 * b);
  q[0] = make_uint4(words[0], words[1], words[2], words[3]);
  q[1] = make_uint4(words[4], words[5], words[6], words[7]);
  reinterpret_cast<u16*>(dst + r * row_bytes + 32 * static_cast<u64>(nb32))[b] = s[0];
}

// Q4_0: (nibble - 8) * d; element j < 16 in the low nibble of byte j, j >= 16 in the high one of j - 16.
extern "C" __global__ void dequant_q4_0_f16(const u8* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  const u64 rb = static_cast<u64>(cols / 32) * 18;
  each_element(out, rows, cols, [&](int r, int c) {
    const u8* b = w + r * rb + (c / 32) * 18;
    const int j = c % 32, q = (j < 16 ? b[2 + j] & 0xF : b[2 + j - 16] >> 4) - 8;
    return __fmul_rn(static_cast<float>(q), f16_to_f32(*reinterpret_cast<const u16*>(b)));
  });
}

extern "C" __global__ void dequant_f32_f16(const float* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  each_element(out, rows, cols, [&](int r, int c) { return w[static_cast<u64>(r) * cols + c]; });
}

extern "C" __global__ void dequant_bf16_f16(const u16* __restrict__ w, u16* __restrict__ out, int rows, int cols) {
  each_element(out, rows, cols, [&](int r, int c) {
    return __int_as_float(static_cast<int>(static_cast<u32>(w[static_cast<u64>(r) * cols + c]) << 16));
  });
}
