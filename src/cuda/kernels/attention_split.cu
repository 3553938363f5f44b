// Decode attention over the 8-bit KV copy, split over the sequence with a cp.async pipeline
// (Note [Split over the 8-bit copy]); attention_combine_splits sums the splits as attention_combine_rescaled
// sums the one pass's blocks.
#include "prelude.cuh"
#include "async_copy.cuh"
#include "attention.cuh"

// Note [Split over the 8-bit copy]
// attention_one_pass_q8 gives each block of 256 threads one head and one tile of 256 positions: its K
// rows, then its V rows, each a memory round trip with the block's arithmetic and barriers between; at
// 16K positions a 7B layer's 2,000 blocks streamed the copy at ~3.3 TB/s of the H200's 4.2. Here a block
// takes `heads` consecutive KV heads (their rows' bytes contiguous) and a share of the positions
// (flash-decoding's split: every splits-th tile of them), and walks it tile by tile through a ring of
// kSplitStages tiles in shared memory filled by cp.async, so the copy streams while the block computes.
// Every warp is a flash-decoding worker of its own: one q head (a KV head's group of q heads read the same
// tile: GQA models read the copy once, not once per q head), `ways` warps a head taking alternate runs of
// 4 x (32 / (hd / 16)) rows of a tile, a running maximum m, sum l and V sums in registers, rescaled by
// exp(m_old - m_new) when m grows; no barrier but the ring's one a tile. The scores are the one pass's,
// bit for bit (the same products in the same order); the weights are f32 as there. At the end the ways of a
// head merge and the block writes each head's unnormalized sum with (m, l) to the split's slot, the one
// pass's layout, and attention_combine_splits rescales as attention_combine_rescaled does.
// The launcher (ops/layer.cpp, attention_split_shape) picks the block: by default 4 warps (or a KV head's
// group), ~16 KB tiles, 2 stages, several blocks an SM. Measured on the H200 (2026-12-04, 7B at 16K
// positions, a layer): one head a block of 512 threads with the one pass's block-wide softmax a tile 71 us
// against the one pass's 43; warps as workers, 16 heads a block, a contiguous range a split 50 us; every
// splits-th tile instead (the splits read neighbouring tiles at a time, as the one pass's blocks do) 47 us;
// the tok/s of the block sizes are at the launcher's knobs. TRUENO_ATTENTION_SPLIT_Q8=0 (a tuning knob)
// keeps the one pass.
#ifndef TRUENO_ATTENTION_SPLIT_STAGES
#define TRUENO_ATTENTION_SPLIT_STAGES 2
#endif
constexpr int kSplitStages = TRUENO_ATTENTION_SPLIT_STAGES < 2 ? 2 : TRUENO_ATTENTION_SPLIT_STAGES;  // the ring refills a stage others read otherwise
// Note [The copy's rows before the wait]
// The split kernel waits for the kernel before it (rope_append_q8, which writes the step's row and rotates
// q) only after its ring's first tiles are asked for, when those tiles hold no row of this step: the rows
// before the step's position are settled before the step's first kernel starts (CudaSequence::step begins
// with a full synchronization, and the copy's catch-ups, update_kv_copy and the prompt's, are synchronized
// before the step's kernels; attention_decode_q8's precondition in ops/layer.h), and so is *pos (a copy
// before the step's kernels). A block whose first tile holds the step's row waits first. Measured on the H200
// (7B tg64, 2026-12-04 fourth, two leases of two rounds): 16K 309.9 / 308.6 and 309.9 / 312.0 against 306.1 /
// 306.3 and 308.5 / 308.0 waiting first (+0.5-1.3%); 32K +0.0-0.6%. TRUENO_ATTENTION_SPLIT_EARLY=0 (a tuning
// knob) waits first.
#ifndef TRUENO_ATTENTION_SPLIT_EARLY
#define TRUENO_ATTENTION_SPLIT_EARLY 1
#endif
// The weights and rescales by __expf (ex2.approx of x log2 e, a relative error of about 2^-21) instead of
// expf's longer sequence (its range reduction): the split's arithmetic sits on its ring's critical path.
// Measured on the H200 (7B tg64, 2026-12-04 seventh, two leases, five rounds): 16K +0.2-0.7%, 32K
// +1.0-1.5%; against the one pass's output nmse ~4e-14 as with expf. TRUENO_ATTENTION_SPLIT_FAST_EXP=0 (a
// tuning knob) takes expf.
#ifndef TRUENO_ATTENTION_SPLIT_FAST_EXP
#define TRUENO_ATTENTION_SPLIT_FAST_EXP 1
#endif
__device__ __forceinline__ float split_exp(float x) { return TRUENO_ATTENTION_SPLIT_FAST_EXP ? __expf(x) : expf(x); }

// Where thread t's copies of a tile begin (row, piece of 16 bytes / word of 4) and how they step (by the
// block's threads): the same every tile, so the divisions are done once.
struct SplitCopies {
  int row, piece, drow, dpiece, wrow, word, dwrow, dword;
  __device__ SplitCopies(int pieces, int words) {
    const int t = threadIdx.x, n = blockDim.x;
    row = t / pieces, piece = t % pieces, drow = n / pieces, dpiece = n % pieces;
    wrow = t / words, word = t % words, dwrow = n / words, dword = n % words;
  }
};

// Positions [j0, j0 + rows) of the block's KV heads (row_bytes = heads x hd values a position, k and kd
// at the first head's column) to `stage`: K values [rows][row_bytes], K scales [rows][row_bytes / 32]
// (f16), then V's the same (at half); positions at or past n are zeros (their V must not be garbage:
// 0 x NaN is NaN).
__device__ __forceinline__ void split_load_tile(const i8* __restrict__ k, const u16* __restrict__ kd, const i8* __restrict__ v,
                                                const u16* __restrict__ vd, int j0, int n, int rows, int row_bytes, int kv_row,
                                                const SplitCopies& at0, u32 stage, u32 half) {
  const int pieces = row_bytes / 16, words = row_bytes / 64, scales = kv_row / kQ8Block;
  int row = at0.row, piece = at0.piece;
  while (row < rows) {
    const int j = j0 + row;
    const bool ok = j < n;
    const u64 at = static_cast<u64>(ok ? j : j0) * kv_row + piece * 16;
    const u32 to = stage + row * row_bytes + piece * 16;
    copy_async_16(to, k + at, ok);
    copy_async_16(to + half, v + at, ok);
    piece += at0.dpiece, row += at0.drow;
    if (piece >= pieces) piece -= pieces, ++row;
  }
  const u32 values = rows * row_bytes;
  row = at0.wrow;
  int word = at0.word;
  while (row < rows) {
    const int j = j0 + row;
    const bool ok = j < n;
    const u64 at = static_cast<u64>(ok ? j : j0) * scales + word * 2;
    const u32 to = stage + values + row * (row_bytes / 16) + word * 4;
    copy_async_4(to, kd + at, ok);
    copy_async_4(to + half, vd + at, ok);
    word += at0.dword, row += at0.dwrow;
    if (word >= words) word -= words, ++row;
  }
}

// One block (Note [Split over the 8-bit copy]): KV heads [kvh0, kvh0 + heads), tiles of `rows` positions
// first, first + stride, ... of the n positions; k8 .. vd one layer of the copy. Warp w serves q head
// kvh0 * group + w / ways.
template <int HD>
__device__ __forceinline__ void attention_split_q8_body(const float* __restrict__ q, const i8* __restrict__ k8, const u16* __restrict__ kd,
                                                        const i8* __restrict__ v8, const u16* __restrict__ vd, int kvh0, int heads,
                                                        int group, int ways, int rows, int first, int stride, int n, int kv_row,
                                                        float scale, int slot_stride, int slot, float* __restrict__ ml,
                                                        float* __restrict__ o) {
  constexpr int kLanes = HD / 16, kRows = 32 / kLanes, kRun = 4 * kRows;  // lanes a row, rows a pass, rows a run
  extern __shared__ __align__(16) unsigned char ring[];
  const int row_bytes = heads * HD, half = rows * row_bytes * 17 / 16, stage_bytes = 2 * half;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, part = lane % kLanes, rsub = lane / kLanes;
  const int hs = warp / ways, way = warp % ways, kvl = hs / group, h = kvh0 * group + hs;
  const int tiles = ((n + rows - 1) / rows - 1 - first) / stride + 1, runs = rows / kRun;
  const u32 ring_at = shared_address(ring);
  const SplitCopies copies(row_bytes / 16, row_bytes / 64);
  const i8* kb = k8 + kvh0 * HD;
  const u16* kdb = kd + kvh0 * HD / kQ8Block;
  const i8* vb = v8 + kvh0 * HD;
  const u16* vdb = vd + kvh0 * HD / kQ8Block;
  // Note [The copy's rows before the wait]: the ring's first fill asked for before the wait where it holds no
  // row of this step (the step's own row is in the split's last tile)
  const bool early = TRUENO_ATTENTION_SPLIT_EARLY && tiles > kSplitStages - 1;
  if (!early) overlap_wait();
#pragma unroll
  for (int s = 0; s < kSplitStages - 1; ++s) {
    if (s < tiles)
      split_load_tile(kb, kdb, vb, vdb, (first + s * stride) * rows, n, rows, row_bytes, kv_row, copies, ring_at + s * stage_bytes, half);
    commit_copies();
  }
  if (early) overlap_wait();
  float qv[16];
#pragma unroll
  for (int e = 0; e < 16; ++e) qv[e] = round_to_f16(q[h * HD + part * 16 + e]);
  float m = -__int_as_float(0x7f800000), l = 0.0f, acc[16] = {};
  for (int i = 0; i < tiles; ++i) {
    wait_copies<kSplitStages - 2>();
    __syncthreads();  // tile i is everyone's; every warp is done with tile i - 1 (its stage is refilled next)
    const int ahead = i + kSplitStages - 1;
    if (ahead < tiles)
      split_load_tile(kb, kdb, vb, vdb, (first + ahead * stride) * rows, n, rows, row_bytes, kv_row, copies,
                      ring_at + (ahead % kSplitStages) * stage_bytes, half);
    commit_copies();
    const unsigned char* stage = ring + (i % kSplitStages) * stage_bytes;
    const i8* ks = reinterpret_cast<const i8*>(stage) + kvl * HD + part * 16;
    const u16* kds = reinterpret_cast<const u16*>(stage + rows * row_bytes) + kvl * (HD / kQ8Block) + part / 2;
    const i8* vs = ks + half;
    const u16* vds = reinterpret_cast<const u16*>(reinterpret_cast<const unsigned char*>(kds) + half);
    const int jt = (first + i * stride) * rows;
    for (int r = way; r < runs && jt + r * kRun < n; r += ways) {
      // The run's scores (row_dot_q8, as scores_q8_vector's); then the online softmax over them.
      float s[4];
      float mt = -__int_as_float(0x7f800000);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int row = r * kRun + u * kRows + rsub;
        const float dot = row_dot_q8<kLanes>(*reinterpret_cast<const uint4*>(ks + row * row_bytes), kds[row * (row_bytes / kQ8Block)], qv);
        s[u] = jt + row < n ? dot * scale : -__int_as_float(0x7f800000);
        mt = fmaxf(mt, s[u]);
      }
#pragma unroll
      for (int off = kLanes; off < 32; off <<= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
      const float m_new = fmaxf(m, mt), alpha = split_exp(m - m_new);
      m = m_new;
      l *= alpha;
#pragma unroll
      for (int x = 0; x < 16; ++x) acc[x] *= alpha;
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int row = r * kRun + u * kRows + rsub;
        const float p = split_exp(s[u] - m_new);  // 0 past n (s = -inf)
        l += p;
        const float pj = p * f16_to_f32(vds[row * (row_bytes / kQ8Block)]);
        float vv[16];
        unpack_i8x16(*reinterpret_cast<const uint4*>(vs + row * row_bytes), vv);
#pragma unroll
        for (int x = 0; x < 16; ++x) acc[x] += pj * vv[x];
      }
    }
  }
  // The warp's rows: lanes of one part hold different rows' sums (every lane of a row the same p).
#pragma unroll
  for (int off = kLanes; off < 32; off <<= 1) {
    l += __shfl_xor_sync(0xffffffffu, l, off);
#pragma unroll
    for (int x = 0; x < 16; ++x) acc[x] += __shfl_xor_sync(0xffffffffu, acc[x], off);
  }
  float* out = o + (static_cast<u64>(h) * slot_stride + slot) * HD;
  float* ml_out = ml + (static_cast<u64>(h) * slot_stride + slot) * 2;
  if (ways == 1) {
    if (rsub == 0)
#pragma unroll
      for (int x = 0; x < 16; ++x) out[part * 16 + x] = acc[x];
    if (lane == 0) ml_out[0] = m, ml_out[1] = l;
    return;
  }
  // The ways of a head: rescaled to their largest m in shared memory (the ring is free once every warp is
  // past the last tile).
  wait_copies<0>();
  __syncthreads();
  float* sums = reinterpret_cast<float*>(ring);  // [warps][HD]
  float* ms = sums + blockDim.x / 32 * HD;       // [warps][2]
  if (rsub == 0)
#pragma unroll
    for (int x = 0; x < 16; ++x) sums[warp * HD + part * 16 + x] = acc[x];
  if (lane == 0) ms[2 * warp] = m, ms[2 * warp + 1] = l;
  __syncthreads();
  if (way != 0) return;
  float M = -__int_as_float(0x7f800000);
  for (int w = 0; w < ways; ++w) M = fmaxf(M, ms[2 * (warp + w)]);
  float L = 0.0f;
  for (int w = 0; w < ways; ++w) L += ms[2 * (warp + w) + 1] * expf(ms[2 * (warp + w)] - M);
  for (int d = lane; d < HD; d += 32) {
    float sum = 0.0f;
    for (int w = 0; w < ways; ++w) sum += sums[(warp + w) * HD + d] * expf(ms[2 * (warp + w)] - M);
    out[d] = sum;
  }
  if (lane == 0) ml_out[0] = M, ml_out[1] = L;
}

// Grid: blockIdx.x the group of `heads` KV heads, blockIdx.y the split of gridDim.y; 32 x heads x group x
// ways threads; tiles of `rows` positions (a multiple of ways runs of 4 x 32 / (hd / 16)), split y taking
// tiles y, y + splits, ... (Note [Split over the 8-bit copy]). ml and o in the
// scratch's layout, split y in the slot of chunk y of the q head (grid_chunks: the scratch's chunk
// stride; the launcher keeps splits within it). Dynamic shared memory: kSplitStages x 2 x rows x heads x hd
// x 17 / 16 bytes.
extern "C" __global__ void __launch_bounds__(512, 1)
    attention_split_q8(const float* __restrict__ q, const i8* __restrict__ k8, const u16* __restrict__ kd, const i8* __restrict__ v8,
                       const u16* __restrict__ vd, const int* __restrict__ pos, int hd, int group, int kv_row, float scale,
                       int grid_chunks, int heads, int ways, int rows, float* __restrict__ ml, float* __restrict__ o) {
  overlap_launch();  // the body waits (Note [The copy's rows before the wait]); *pos is settled before the step
  const int n = *pos + 1;
  if (static_cast<int>(blockIdx.y) * rows >= n) return;
  const int kvh0 = blockIdx.x * heads;
  if (hd == 128)
    attention_split_q8_body<128>(q, k8, kd, v8, vd, kvh0, heads, group, ways, rows, blockIdx.y, gridDim.y, n, kv_row, scale, grid_chunks,
                                 blockIdx.y, ml, o);
  else
    attention_split_q8_body<64>(q, k8, kd, v8, vd, kvh0, heads, group, ways, rows, blockIdx.y, gridDim.y, n, kv_row, scale, grid_chunks,
                                blockIdx.y, ml, o);
}

// out[h] from the splits' sums (attention_combine_rescaled's arithmetic over the splits with a tile).
extern "C" __global__ void __launch_bounds__(256)
    attention_combine_splits(const float* __restrict__ o, const float* __restrict__ ml, const int* __restrict__ pos, int hd, int max_chunks,
                             int splits, int rows, float* __restrict__ out) {
  overlap_prologue();
  attention_combine_rescaled_body(o, ml, min(splits, (*pos + rows) / rows), 1, blockIdx.x, hd, max_chunks, out);
}
