// Causal prefill attention in one pass, flash style (Note [Flash prefill attention], ops/prefill.cpp):
// tiles of query rows against tiles of keys and values read from the layer's f16 cache, an online softmax
// in registers, tensor-core mma (f16 operands, f32 accumulation) for both products, no score matrix.
//
// Rows: for KV head g = blockIdx.y, the T x group query rows that read it, row r = token r / group of
// head g * group + r % group, so the heads of a group share every K/V tile a block loads. A block holds
// 64 rows (4 warps x 16); rows past T x group repeat the last one and are not stored.
#include "async_copy.cuh"

namespace {

constexpr int kWarps = 4;
constexpr int kRows = kWarps * 16;  // query rows per block
constexpr int kKeys = 64;           // keys per tile

__device__ __forceinline__ void load_matrices(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void load_matrices_transposed(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// c (16 x 8, f32) += a (16 x 16, f16, row-major fragment) b (16 x 8, f16, column fragment).
__device__ __forceinline__ void mma(float* c, const u32* a, u32 b0, u32 b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as f16 in one register, lo in the low half (the lower column of a fragment).
__device__ __forceinline__ u32 pack_f16(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Fragment layouts (PTX ISA, mma.m16n8k16): lane = 4 g + i holds A rows g and g + 8, columns 2i, 2i + 1
// and 2i + 8, 2i + 9; B column g, rows 2i, 2i + 1 and 2i + 8, 2i + 9; C rows g and g + 8, columns 2i, 2i + 1.
template <int HD>
__device__ __forceinline__ void flash_attention(const u16* __restrict__ q16, const u16* __restrict__ k_cache,
                                                const u16* __restrict__ v_cache, float* __restrict__ out, int T, int pos0, int n_head,
                                                int group, int kv_row, float scale_log2) {
  constexpr int kStride = HD + 8;  // a tile row in shared memory, padded so ldmatrix rows hit distinct banks
  __shared__ __align__(16) u16 ks[kKeys * kStride];
  __shared__ __align__(16) u16 vs[kKeys * kStride];
  const int g = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, quad = lane & 3;
  const int rows = T * group, q_ld = n_head * HD;
  const int r0 = (gridDim.x - 1 - blockIdx.x) * kRows;  // the longest (last) row tiles start first

  int row[2], pos[2];
  const u16* q_row[2];
  for (int i = 0; i < 2; ++i) {
    row[i] = r0 + warp * 16 + (lane >> 2) + 8 * i;
    const int r = min(row[i], rows - 1), t = r / group;
    pos[i] = pos0 + t;
    q_row[i] = q16 + static_cast<u64>(t) * q_ld + (g * group + r % group) * HD;
  }
  u32 qa[HD / 16][4];
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    const int c = kk * 16 + 2 * quad;
    qa[kk][0] = *reinterpret_cast<const u32*>(q_row[0] + c), qa[kk][1] = *reinterpret_cast<const u32*>(q_row[1] + c);
    qa[kk][2] = *reinterpret_cast<const u32*>(q_row[0] + c + 8), qa[kk][3] = *reinterpret_cast<const u32*>(q_row[1] + c + 8);
  }
  const int n_keys = pos0 + (min(r0 + kRows, rows) - 1) / group + 1;  // keys the block's last row sees
  const int first_pos = pos0 + r0 / group;                               // every row sees keys <= first_pos
  const int n_tiles = (n_keys + kKeys - 1) / kKeys;
  const u16* k_base = k_cache + g * HD;
  const u16* v_base = v_cache + g * HD;
  const auto load_tile = [&](u16* dst, const u16* base, int j0) {
    constexpr int kPieces = HD / 8;  // 16-byte pieces per key
    for (int i = threadIdx.x; i < kKeys * kPieces; i += kWarps * 32) {
      const int key = i / kPieces, piece = i % kPieces;
      const bool valid = j0 + key < n_keys;
      copy_async_16(shared_address(dst + key * kStride + piece * 8), base + static_cast<u64>(valid ? j0 + key : 0) * kv_row + piece * 8,
                    valid);
    }
    commit_copies();
  };

  float o[HD / 8][4];
#pragma unroll
  for (int n = 0; n < HD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m[2] = {-__int_as_float(0x7f800000), -__int_as_float(0x7f800000)}, l[2] = {0.0f, 0.0f};

  // Copy groups in flight: K of tile j while V of tile j - 1 is used, V of tile j while K of tile j is.
  load_tile(ks, k_base, 0);
  load_tile(vs, v_base, 0);
  for (int jt = 0; jt < n_tiles; ++jt) {
    const int j0 = jt * kKeys;
    wait_copies<1>();  // K of this tile
    __syncthreads();
    float s[kKeys / 8][4];
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk)
#pragma unroll
      for (int jp = 0; jp < kKeys / 16; ++jp) {  // key n-tiles 2 jp and 2 jp + 1; matrix lane / 8 of four
        u32 b0, b1, b2, b3;
        load_matrices(shared_address(ks + (jp * 16 + (lane >> 4) * 8 + (lane & 7)) * kStride + kk * 16 + ((lane >> 3) & 1) * 8), b0, b1,
                      b2, b3);
        mma(s[2 * jp], qa[kk], b0, b1);
        mma(s[2 * jp + 1], qa[kk], b2, b3);
      }
    __syncthreads();  // every warp is done with this K tile
    if (jt + 1 < n_tiles) load_tile(ks, k_base, j0 + kKeys);
    else commit_copies();  // an empty group keeps the count of groups in flight the same

    const bool masked = j0 + kKeys - 1 > first_pos;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float mx = m[i];
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float v = s[n][2 * i + e] * scale_log2;
          if (masked && j0 + n * 8 + 2 * quad + e > pos[i]) v = -__int_as_float(0x7f800000);
          s[n][2 * i + e] = v;
          mx = fmaxf(mx, v);
        }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float rescale = exp2f(m[i] - mx);  // key 0 is in tile 0, so mx is finite from the first tile
      m[i] = mx, l[i] *= rescale;
#pragma unroll
      for (int n = 0; n < HD / 8; ++n) o[n][2 * i] *= rescale, o[n][2 * i + 1] *= rescale;
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = exp2f(s[n][2 * i + e] - mx);
          s[n][2 * i + e] = p, l[i] += p;
        }
    }

    wait_copies<1>();  // V of this tile
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      const u32 pa[4] = {pack_f16(s[2 * kk][0], s[2 * kk][1]), pack_f16(s[2 * kk][2], s[2 * kk][3]),
                         pack_f16(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack_f16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int jp = 0; jp < HD / 16; ++jp) {  // value n-tiles 2 jp and 2 jp + 1
        u32 b0, b1, b2, b3;
        load_matrices_transposed(
            shared_address(vs + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * kStride + jp * 16 + (lane >> 4) * 8), b0, b1, b2, b3);
        mma(o[2 * jp], pa, b0, b1);
        mma(o[2 * jp + 1], pa, b2, b3);
      }
    }
    __syncthreads();  // every warp is done with this V tile
    if (jt + 1 < n_tiles) load_tile(vs, v_base, j0 + kKeys);
    else commit_copies();
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
    if (row[i] >= rows) continue;
    const float inv = 1.0f / l[i];
    const int t = row[i] / group, h = g * group + row[i] % group;
    float* o_row = out + static_cast<u64>(t) * q_ld + h * HD;
#pragma unroll
    for (int n = 0; n < HD / 8; ++n) {
      float2 v;
      v.x = o[n][2 * i] * inv, v.y = o[n][2 * i + 1] * inv;
      *reinterpret_cast<float2*>(o_row + n * 8 + 2 * quad) = v;
    }
  }
}

}  // namespace

// out[t][n_head * hd] (f32): the causal attention of f16 q16[t][n_head * hd] over the f16 caches
// [positions][kv_row] at positions <= pos0 + t. Grid (ceil(T group / 64), n_head / group), 128 threads.
// scale_log2 = log2(e) / sqrt(hd).
extern "C" __global__ void __launch_bounds__(kWarps * 32)
    flash_attention_64(const u16* __restrict__ q16, const u16* __restrict__ kc, const u16* __restrict__ vc, float* __restrict__ out, int T,
                       int pos0, int n_head, int group, int kv_row, float scale_log2) {
  flash_attention<64>(q16, kc, vc, out, T, pos0, n_head, group, kv_row, scale_log2);
}
extern "C" __global__ void __launch_bounds__(kWarps * 32)
    flash_attention_128(const u16* __restrict__ q16, const u16* __restrict__ kc, const u16* __restrict__ vc, float* __restrict__ out,
                        int T, int pos0, int n_head, int group, int kv_row, float scale_log2) {
  flash_attention<128>(q16, kc, vc, out, T, pos0, n_head, group, kv_row, scale_log2);
}
