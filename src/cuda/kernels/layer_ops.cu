// The small per-layer steps of a decode step (one token), each as the CPU forward pass computes it
// (realizar/src/model/forward.cpp): RMSNorm, RoPE, appending k and v to the f16 KV cache, attention
// over the cache (q and the softmax weights rounded to f16, Note [F16 attention]), SwiGLU, residual add.
#include "prelude.cuh"

// out[row] = x[row] * (1 / sqrt(mean(x[row]^2) + eps)) * w; one block of 256 threads per row.
extern "C" __global__ void __launch_bounds__(256)
    rmsnorm(const float* __restrict__ x, const float* __restrict__ w, float eps, float* __restrict__ out, int n) {
  overlap_prologue();
  rmsnorm_row(x + static_cast<u64>(blockIdx.x) * n, w, eps, out + static_cast<u64>(blockIdx.x) * n, n);
}

// Positions come from device memory (*pos), so that one captured CUDA graph serves every decode step.
//
// Rotates the first rope_dim values of each of n_heads heads (head size hd) by theta_i = pos *
// theta_scale^i, the angle built by repeated f32 multiplication as on the CPU, divided by freqs[i] when
// freqs is not null; pairs (2i, 2i + 1), or (i, i + rope_dim / 2) when neox. One thread per (head, i).
extern "C" __global__ void rope(float* __restrict__ v, int n_heads, int hd, int rope_dim, const int* __restrict__ pos,
                                float theta_scale, const float* __restrict__ freqs, int neox) {
  overlap_prologue();
  const int half = rope_dim / 2;
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= n_heads * half) return;
  const int h = id / half, i = id % half;
  float sn, cs;
  rope_sincos(*pos, i, theta_scale, freqs, sn, cs);
  float* p = v + h * hd;
  const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
  const float x0 = p[a], x1 = p[b];
  p[a] = x0 * cs - x1 * sn;
  p[b] = x0 * sn + x1 * cs;
}

// k, v [n] -> f16 at kc[*pos * n], vc[*pos * n].
extern "C" __global__ void kv_append(const float* __restrict__ k, const float* __restrict__ v, u16* __restrict__ kc,
                                     u16* __restrict__ vc, const int* __restrict__ pos, int n) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  kc[static_cast<u64>(*pos) * n + i] = f32_to_f16_bits(k[i]);
  vc[static_cast<u64>(*pos) * n + i] = f32_to_f16_bits(v[i]);
}

// Decode attention, split over the sequence (flash-decoding style) so that every SM has work: positions
// come in chunks of kChunk, one block per (head, chunk), three kernels:
//   attention_scores    s[h][j] = (f16(q_h) . k_j) * scale for the chunk; the chunk's max m and
//                       sum l of exp(s - m)
//   attention_weights_v M = max m, L = sum l * exp(m - M) over the chunks; p_j = f16(exp(s_j - M) / L)
//                       (the CPU's rounded weights, Note [F16 attention]); o[h][chunk] = sum p_j v_j
//   attention_combine   out[h] = sum over chunks of o[h][chunk]
// for head h = blockIdx.x (KV head h / group) over positions j <= *pos of one layer's cache [n_ctx][kv_row].
// Scratch: s [n_head][n_ctx], ml [n_head][n_chunks][2], o [n_head][n_chunks][hd].
#include "attention.cuh"
#include "rope_append.cuh"

extern "C" __global__ void __launch_bounds__(256)
    attention_scores(const float* __restrict__ q, const u16* __restrict__ kc, const int* __restrict__ pos, int hd, int group,
                     int kv_row, float scale, int n_ctx, float* __restrict__ s, float* __restrict__ ml) {
  overlap_prologue();
  attention_scores_body(q, kc, *pos + 1, blockIdx.x, blockIdx.y, gridDim.y, hd, group, kv_row, scale, n_ctx, s, ml);
}

extern "C" __global__ void __launch_bounds__(256)
    attention_weights_v(const u16* __restrict__ vc, const int* __restrict__ pos, int hd, int group, int kv_row, int n_ctx,
                        const float* __restrict__ s, const float* __restrict__ ml, float* __restrict__ o) {
  overlap_prologue();
  attention_weights_v_body(vc, *pos + 1, blockIdx.x, blockIdx.y, gridDim.y, hd, group, kv_row, n_ctx, s, ml, o);
}

// Up to kOneBlockPositions positions, the three in one launch of one block per head (Note [One block per
// head] in attention.cuh).
extern "C" __global__ void __launch_bounds__(256, 1)
    attention_one_block(const float* __restrict__ q, const u16* __restrict__ kc, const u16* __restrict__ vc, const int* __restrict__ pos,
                        int hd, int group, int kv_row, float scale, float* __restrict__ out) {
  overlap_prologue();
  attention_one_block_body(q, kc, vc, *pos + 1, blockIdx.x, hd, group, kv_row, scale, out);
}

// Note [Rope inside the attention]
// Below kOneBlockPositions positions a decode step's rope_append (rotate q and k, append k and v to the
// cache) runs inside the one-block attention: each head's block rotates its q and its KV head's k into
// shared memory (rope_head: rope_append's arithmetic), takes the step's own K and V row from there and the
// earlier rows from the cache; the first block of each KV group also writes the row to the cache (a block
// never reads a row another block writes). The outputs and the cache equal rope_append + attention_one_block
// bit for bit (a test checks); one launch per layer less. q and k in global memory stay unrotated. The
// cached rows (those before the step's own) do not depend on the rope, so their loads go out before it.
extern "C" __global__ void __launch_bounds__(256, 1)
    rope_attention_one_block(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v, int hd, int rope_dim,
                             const int* __restrict__ pos, float theta_scale, const float* __restrict__ freqs, int neox, int group,
                             int kv_row, float scale, u16* __restrict__ kc, u16* __restrict__ vc, float* __restrict__ out) {
  overlap_prologue();
  const int p = min(*pos, kOneBlockPositions - 1), h = blockIdx.x, kvh = h / group;  // the launcher's promise; memory-safe if broken
  __shared__ __align__(16) float qs[128];
  __shared__ __align__(16) u16 ks[128], vs[128];
  __shared__ float s[kOneBlockPositions];
  const u64 slot = static_cast<u64>(p) * kv_row + kvh * hd;
  const auto rope = [&] {  // after the cached rows' loads are out: their round trip overlaps the rope's
    rope_head(q + h * hd, k + kvh * hd, v + kvh * hd, hd, rope_dim, p, theta_scale, freqs, neox, qs, ks, vs, kc + slot, vc + slot,
              h % group == 0);
    __syncthreads();
  };
  if (hd == 128) one_block_vector<128>(kc + kvh * hd, vc + kvh * hd, p + 1, p, kv_row, scale, qs, s, out + h * hd, ks, vs, rope);
  else if (hd == 64) one_block_vector<64>(kc + kvh * hd, vc + kvh * hd, p + 1, p, kv_row, scale, qs, s, out + h * hd, ks, vs, rope);
}

// Note [Rope and the 8-bit copy in one launch]
// Past kOneBlockPositions with the 8-bit copy a decode step ran rope_append, then kv_quantize_q8 for its
// position: two launches per layer of ~1.5 us each on the H200 (7B at 16K positions, kernel_timeline). One
// block per KV head now does both: it rotates its group's q heads and its k head in place (rope_append's
// arithmetic), appends k and v to the f16 cache, and quantizes the same f16 values to the copy; q, k, the
// caches and the copy equal the two launches' bit for bit (a test checks). Heads of at most 256 values, a
// multiple of 32 (the launcher's).
extern "C" __global__ void __launch_bounds__(256)
    rope_append_q8(float* __restrict__ q, float* __restrict__ k, const float* __restrict__ v, int hd, int rope_dim,
                   const int* __restrict__ pos, float theta_scale, const float* __restrict__ freqs, int neox, int group, int kv_row,
                   u16* __restrict__ kc, u16* __restrict__ vc, i8* __restrict__ k8, u16* __restrict__ kd, i8* __restrict__ v8,
                   u16* __restrict__ vd) {
  overlap_prologue();
  const int p = *pos, kvh = blockIdx.x, t = threadIdx.x, half = rope_dim / 2;
  __shared__ u16 ks[256], vs[256];
  for (int id = t; id < (group + 1) * half; id += blockDim.x) {
    const int hh = id / half, i = id % half;  // hh < group: q head kvh * group + hh; hh == group: the k head
    float sn, cs;
    rope_sincos(p, i, theta_scale, freqs, sn, cs);
    float* x = hh < group ? q + (kvh * group + hh) * hd : k + kvh * hd;
    const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const float x0 = x[a], x1 = x[b];
    const float y0 = x0 * cs - x1 * sn, y1 = x0 * sn + x1 * cs;
    x[a] = y0, x[b] = y1;
    if (hh == group) ks[a] = f32_to_f16_bits(y0), ks[b] = f32_to_f16_bits(y1);
  }
  for (int d = t; d < hd; d += blockDim.x) {
    vs[d] = f32_to_f16_bits(v[kvh * hd + d]);
    if (d >= rope_dim) ks[d] = f32_to_f16_bits(k[kvh * hd + d]);
  }
  __syncthreads();
  const u64 row = static_cast<u64>(p) * kv_row + kvh * hd;
  for (int d = t; d < hd; d += blockDim.x) kc[row + d] = ks[d], vc[row + d] = vs[d];
  for (int w = t / 32; w < 2 * (hd / 32); w += blockDim.x / 32) {  // a warp per 32 values: K's, then V's
    const bool is_v = w >= hd / 32;
    const int b = is_v ? w - hd / 32 : w;
    quantize_q8_value(f16_to_f32((is_v ? vs : ks)[b * 32 + (t & 31)]), is_v ? v8 : k8, is_v ? vd : kd, row + b * 32, true);
  }
}

extern "C" __global__ void attention_combine(const float* __restrict__ o, const int* __restrict__ pos, int hd, int max_chunks,
                                             float* __restrict__ out) {
  overlap_prologue();
  attention_combine_body(o, *pos + 1, blockIdx.x, hd, max_chunks, out);
}

// The split attention over the 8-bit copy of the KV cache (Note [8-bit KV copy] in attention.cuh):
// attention_scores and attention_weights_v reading k8/kd and v8/vd ([n_ctx][kv_row] int8 values and
// [n_ctx][kv_row / 32] f16 scales of one layer), one block per head and kQ8Keys positions (blockIdx.y),
// grid_chunks 64-position chunks in the scratch; attention_combine_wide sums the blocks' partials.
extern "C" __global__ void __launch_bounds__(256)
    attention_scores_q8(const float* __restrict__ q, const i8* __restrict__ k8, const u16* __restrict__ kd, const int* __restrict__ pos,
                        int hd, int group, int kv_row, float scale, int n_ctx, int grid_chunks, float* __restrict__ s,
                        float* __restrict__ ml) {
  overlap_prologue();
  attention_scores_q8_body(q, k8, kd, *pos + 1, blockIdx.x, blockIdx.y, grid_chunks, hd, group, kv_row, scale, n_ctx, s, ml);
}

extern "C" __global__ void __launch_bounds__(256)
    attention_weights_v_q8(const i8* __restrict__ v8, const u16* __restrict__ vd, const int* __restrict__ pos, int hd, int group,
                           int kv_row, int n_ctx, int grid_chunks, const float* __restrict__ s, const float* __restrict__ ml,
                           float* __restrict__ o) {
  overlap_prologue();
  attention_weights_v_q8_body(v8, vd, *pos + 1, blockIdx.x, blockIdx.y, grid_chunks, hd, group, kv_row, n_ctx, s, ml, o);
}

// Note [One pass over the 8-bit copy] (attention.cuh): one launch of (head, block of kQ8Keys positions)
// blocks, then attention_combine_rescaled; ml and o in the scratch's layout (a block's slot: its first chunk).
// Blocks per SM to compile attention_one_pass_q8 for (0: the compiler's choice, 64 registers with 8 bytes
// spilled; 4: 64 registers without a spill, also with TRUENO_ATTENTION_Q8_SWIZZLE, which takes 79 unbounded).
// 4 measured on the H200 (2026-12-03, 7B tg64 with --decode-attention q8, two rounds): 250.8 / 250.8 tok/s
// at 16K positions against 247.5 / 247.8 with 0, 174.4 / 174.1 against 172.3 / 172.8 at 32K.
#ifndef TRUENO_ATTENTION_Q8_MIN_BLOCKS
#define TRUENO_ATTENTION_Q8_MIN_BLOCKS 4
#endif
extern "C" __global__ void __launch_bounds__(256, TRUENO_ATTENTION_Q8_MIN_BLOCKS)
    attention_one_pass_q8(const float* __restrict__ q, const i8* __restrict__ k8, const u16* __restrict__ kd, const i8* __restrict__ v8,
                          const u16* __restrict__ vd, const int* __restrict__ pos, int hd, int group, int kv_row, float scale,
                          int grid_chunks, float* __restrict__ ml, float* __restrict__ o) {
  overlap_prologue();
  attention_one_pass_q8_body(q, k8, kd, v8, vd, *pos + 1, blockIdx.x, blockIdx.y, grid_chunks, hd, group, kv_row, scale, ml, o);
}

extern "C" __global__ void __launch_bounds__(256)
    attention_combine_rescaled(const float* __restrict__ o, const float* __restrict__ ml, const int* __restrict__ pos, int hd,
                               int max_chunks, float* __restrict__ out) {
  overlap_prologue();
  attention_combine_rescaled_body(o, ml, (*pos + kQ8Keys) / kQ8Keys, kQ8Keys / kChunk, blockIdx.x, hd, max_chunks, out);
}

// attention_combine with 256 threads per head (hd 64 or 128), over blocks of block_positions positions.
extern "C" __global__ void __launch_bounds__(256)
    attention_combine_wide(const float* __restrict__ o, const int* __restrict__ pos, int hd, int max_chunks, int block_positions,
                           float* __restrict__ out) {
  overlap_prologue();
  attention_combine_wide_body(o, *pos + 1, blockIdx.x, hd, max_chunks, block_positions, out);
}

// Positions [p0, p0 + count) of the f16 caches kc and vc to the 8-bit copy (k8/kd, v8/vd), p0 = *pos when
// pos is not null (the decode step's position), else first; blockIdx.y / 2 = the layer (layer_stride
// values apart in the caches and copies, layer_stride / 32 scales), blockIdx.y % 2: 0 K, 1 V. One warp
// per 32 values, 8 per block.
extern "C" __global__ void __launch_bounds__(256)
    kv_quantize_q8(const u16* __restrict__ kc, const u16* __restrict__ vc, i8* __restrict__ k8, u16* __restrict__ kd, i8* __restrict__ v8,
                   u16* __restrict__ vd, const int* __restrict__ pos, int first, int count, int kv_row, u64 layer_stride) {
  overlap_prologue();
  const u64 blocks = static_cast<u64>(count) * (kv_row / kQ8Block), b = static_cast<u64>(blockIdx.x) * 8 + threadIdx.x / 32;
  const int p0 = pos != nullptr ? *pos : first;
  const u64 at = (blockIdx.y / 2) * layer_stride + static_cast<u64>(p0) * kv_row + b * kQ8Block;
  if (blockIdx.y % 2 == 0) quantize_q8_block(kc, k8, kd, at, b < blocks);
  else quantize_q8_block(vc, v8, vd, at, b < blocks);
}

// g[i] = silu(g[i]) * u[i].
extern "C" __global__ void swiglu(float* __restrict__ g, const float* __restrict__ u, int n) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = g[i];
  g[i] = x / (1.0f + expf(-x)) * u[i];
}

// swiglu on 16-byte-aligned rows of 4k values, four per thread (the prompt pass's T x n_ff: one value per
// thread kept too few bytes in flight); each value is computed as swiglu computes it, so the same bits.
extern "C" __global__ void swiglu_v4(float4* __restrict__ g, const float4* __restrict__ u, int n4) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  g[i] = swiglu4(g[i], u[i]);
}

// x[i] += y[i].
extern "C" __global__ void add_inplace(float* __restrict__ x, const float* __restrict__ y, int n) {
  overlap_prologue();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
