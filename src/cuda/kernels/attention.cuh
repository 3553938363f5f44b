// The decode attention's three steps as device functions (Note in layer_ops.cu), shared by the single
// sequence's kernels (layer_ops.cu) and the batched step's (batch_ops.cu): one body, so a sequence's
// attention is the same arithmetic alone or in a batch. n = positions attended (pos + 1); grid_chunks =
// the chunks launched (the stride of the scratch's chunk dimension).
#pragma once
#include "prelude.cuh"

constexpr int kChunk = 64;

// Note [Vector attention rows]
// Decode attention past a few thousand positions is a stream of the KV cache (8.6 GB per token for a 7B
// model at 16K positions). With head sizes 64 and 128 (and 256 threads, 16-byte aligned rows) each lane
// loads 8 halves (16 bytes) of a row at a time, a key's row spread over hd / 8 lanes, and every lane has
// all its loads of the chunk in flight at once; other head sizes take the element-wise loops.
__device__ __forceinline__ bool vector_rows(int hd, int kv_row, const u16* cache) {
  return (hd == 128 || hd == 64) && kv_row % 8 == 0 && (reinterpret_cast<u64>(cache) & 15) == 0 && blockDim.x == 256;
}

__device__ __forceinline__ uint4 zero_uint4() {
  uint4 z;
  z.x = z.y = z.z = z.w = 0u;
  return z;
}

__device__ __forceinline__ void unpack_f16x8(const uint4& r, float* f) {
  const u32 w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) f[2 * i] = f16_to_f32(static_cast<u16>(w[i] & 0xffffu)), f[2 * i + 1] = f16_to_f32(static_cast<u16>(w[i] >> 16));
}

// The dot of one f16 cache row (8 halves in raw) with q's matching 8 values, summed over the kLanes lanes
// that share the row.
template <int kLanes>
__device__ __forceinline__ float row_dot(uint4 raw, const float* qv) {
  float kv[8];
  unpack_f16x8(raw, kv);
  float dot = 0.0f;
#pragma unroll
  for (int e = 0; e < 8; ++e) dot += kv[e] * qv[e];
#pragma unroll
  for (int o = kLanes / 2; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
  return dot;
}

// sc[j - j0] = (k_j . qh) * scale for the chunk's keys j0 <= j < j1; k = the KV head's column of the cache.
template <int HD>
__device__ __forceinline__ void scores_vector(const u16* __restrict__ k, int j0, int j1, int kv_row, float scale,
                                              const float* __restrict__ qh, float* __restrict__ sc) {
  constexpr int kLanes = HD / 8, kKeysPerPass = 256 / kLanes, kPasses = kChunk / kKeysPerPass;
  const int part = threadIdx.x % kLanes, slot = threadIdx.x / kLanes;
  float qv[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) qv[e] = qh[part * 8 + e];
  uint4 raw[kPasses];
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = j0 + slot + u * kKeysPerPass;
    raw[u] = j < j1 ? *reinterpret_cast<const uint4*>(k + static_cast<u64>(j) * kv_row + part * 8) : zero_uint4();
  }
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const float dot = row_dot<kLanes>(raw[u], qv);
    const int j = j0 + slot + u * kKeysPerPass;
    if (part == 0 && j < j1) sc[j - j0] = dot * scale;
  }
}

// oc[d] = the sum over the kGroups rows of partial [kGroups][HD], once every thread has written its row.
template <int HD, int kGroups>
__device__ __forceinline__ void sum_groups(const float* __restrict__ partial, float* __restrict__ oc) {
  __syncthreads();
  for (int d = threadIdx.x; d < HD; d += blockDim.x) {
    float sum = 0.0f;
#pragma unroll 8
    for (int g = 0; g < kGroups; ++g) sum += partial[g * HD + d];
    oc[d] = sum;
  }
}

// oc[d] = sum over the chunk's keys of p[j - j0] v_j[d]; v = the KV head's column of the cache.
template <int HD>
__device__ __forceinline__ void weights_v_vector(const u16* __restrict__ v, int j0, int j1, int kv_row, const float* __restrict__ p,
                                                 float* __restrict__ oc) {
  constexpr int kLanes = HD / 8, kGroups = 256 / kLanes, kPasses = kChunk / kGroups;
  __shared__ float partial[kGroups * HD];
  const int part = threadIdx.x % kLanes, grp = threadIdx.x / kLanes;
  uint4 raw[kPasses];
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = j0 + grp + u * kGroups;
    raw[u] = j < j1 ? *reinterpret_cast<const uint4*>(v + static_cast<u64>(j) * kv_row + part * 8) : zero_uint4();
  }
  float acc[8] = {};
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = j0 + grp + u * kGroups;
    const float pj = j < j1 ? p[j - j0] : 0.0f;
    float vv[8];
    unpack_f16x8(raw[u], vv);
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[e] += pj * vv[e];
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) partial[grp * HD + part * 8 + e] = acc[e];
  sum_groups<HD, kGroups>(partial, oc);
}

// The chunk's scores sc[first, first + count) to s_chunk, with their max m and sum l of exp(s - m) to
// ml_chunk [2].
__device__ __forceinline__ void chunk_stats(const float* __restrict__ sc, int first, int count, float* __restrict__ s_chunk,
                                            float* __restrict__ ml_chunk) {
  const int t = threadIdx.x;
  const float v = t < count ? sc[first + t] : -__int_as_float(0x7f800000);
  const float m = block_max(v);
  const float l = block_sum(t < count ? expf(v - m) : 0.0f);
  if (t < count) s_chunk[t] = v;
  if (t == 0) ml_chunk[0] = m, ml_chunk[1] = l;
}

// The second level: M and L over every chunk of head h (each thread reducing a stride of them: more chunks
// than threads past blockDim x kChunk positions); the chunk's weights p [j1 - j0] = f16(exp(s - M) / L).
__device__ __forceinline__ void chunk_weights(const float* __restrict__ s, const float* __restrict__ ml, int n, int h, int j0, int j1,
                                              int grid_chunks, int n_ctx, float* __restrict__ p) {
  const int n_chunks = (n + kChunk - 1) / kChunk, t = threadIdx.x;
  const float* mlh = ml + h * grid_chunks * 2;
  float mt = -__int_as_float(0x7f800000);
  for (int c = t; c < n_chunks; c += blockDim.x) mt = fmaxf(mt, mlh[2 * c]);
  const float M = block_max(mt);
  float lt = 0.0f;
  for (int c = t; c < n_chunks; c += blockDim.x) lt += mlh[2 * c + 1] * expf(mlh[2 * c] - M);
  const float L = block_sum(lt);
  if (t < j1 - j0) p[t] = round_to_f16(expf(s[static_cast<u64>(h) * n_ctx + j0 + t] - M) / L);
  __syncthreads();
}

__device__ __forceinline__ void attention_scores_body(const float* __restrict__ q, const u16* __restrict__ kc, int n, int h, int chunk,
                                                      int grid_chunks, int hd, int group, int kv_row, float scale, int n_ctx,
                                                      float* __restrict__ s, float* __restrict__ ml) {
  const int j0 = chunk * kChunk;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kChunk), kvh = h / group;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, n_warps = blockDim.x >> 5;
  __shared__ float qh[256];
  __shared__ float sc[kChunk];
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qh[d] = round_to_f16(q[h * hd + d]);
  __syncthreads();
  if (vector_rows(hd, kv_row, kc)) {
    if (hd == 128) scores_vector<128>(kc + kvh * hd, j0, j1, kv_row, scale, qh, sc);
    else scores_vector<64>(kc + kvh * hd, j0, j1, kv_row, scale, qh, sc);
  } else {
    for (int j = j0 + warp; j < j1; j += n_warps) {
      const u16* kj = kc + static_cast<u64>(j) * kv_row + kvh * hd;
      float dot = 0.0f;
      for (int d = lane; d < hd; d += 32) dot += f16_to_f32(kj[d]) * qh[d];
      dot = warp_sum(dot);
      if (lane == 0) sc[j - j0] = dot * scale;
    }
  }
  __syncthreads();
  chunk_stats(sc, 0, j1 - j0, s + static_cast<u64>(h) * n_ctx + j0, ml + (h * grid_chunks + chunk) * 2);
}

__device__ __forceinline__ void attention_weights_v_body(const u16* __restrict__ vc, int n, int h, int chunk, int grid_chunks, int hd,
                                                         int group, int kv_row, int n_ctx, const float* __restrict__ s,
                                                         const float* __restrict__ ml, float* __restrict__ o) {
  const int j0 = chunk * kChunk;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kChunk), kvh = h / group, t = threadIdx.x;
  __shared__ float p[kChunk];
  __shared__ float part[256];
  chunk_weights(s, ml, n, h, j0, j1, grid_chunks, n_ctx, p);
  if (vector_rows(hd, kv_row, vc)) {
    float* oc = o + (static_cast<u64>(h) * grid_chunks + chunk) * hd;
    if (hd == 128) weights_v_vector<128>(vc + kvh * hd, j0, j1, kv_row, p, oc);
    else weights_v_vector<64>(vc + kvh * hd, j0, j1, kv_row, p, oc);
    return;
  }
  const int groups = max(1, static_cast<int>(blockDim.x) / hd), d = t % hd, g = t / hd;
  if (g < groups) {
    const u16* vd = vc + kvh * hd + d;
    float acc = 0.0f;
    for (int j = j0 + g; j < j1; j += groups) acc += p[j - j0] * f16_to_f32(vd[static_cast<u64>(j) * kv_row]);
    part[t] = acc;
  }
  __syncthreads();
  for (int dd = t; dd < hd; dd += blockDim.x) {
    float acc = 0.0f;
    for (int gg = 0; gg < groups; ++gg) acc += part[gg * hd + dd];
    o[(static_cast<u64>(h) * grid_chunks + chunk) * hd + dd] = acc;
  }
}

__device__ __forceinline__ void attention_combine_body(const float* __restrict__ o, int n, int h, int hd, int max_chunks,
                                                       float* __restrict__ out) {
  const int n_chunks = (n + kChunk - 1) / kChunk;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int c = 0; c < n_chunks; ++c) acc += o[(static_cast<u64>(h) * max_chunks + c) * hd + d];
    out[h * hd + d] = acc;
  }
}


// Note [One block per head]
// At short contexts the split kernels are latency, not bandwidth: the 7B's three launches add 11.5 us
// to every layer below 128 positions (tools/kernel_timeline on the H200), 15% of a token, for 1 MB of
// cache. Up to kOneBlockPositions positions one block per head does all three steps: its threads load
// every K and V row they need at once (a single memory round trip), then the scores, the softmax over
// all positions (M and L directly, no chunk partials) with the CPU's f16-rounded weights, and the
// weighted sum of V, written straight to out.
constexpr int kOneBlockPositions = 256;

// qh: the head's q, loaded after the K and V rows (all in flight together). Rows [0, cached) come from
// the cache k, v; row cached (< n) from own_k, own_v: the step's own row, which rope_attention_one_block
// keeps in shared memory (Note [Rope inside the attention]); cached == n otherwise. between() runs after
// the cached rows' loads are issued and before the own row and qh are read (the rope kernel writes them there).
template <int HD, class Between>
__device__ __forceinline__ void one_block_vector(const u16* __restrict__ k, const u16* __restrict__ v, int n, int cached, int kv_row,
                                                 float scale, const float* __restrict__ qh, float* __restrict__ s, float* __restrict__ oh,
                                                 const u16* own_k, const u16* own_v, Between between) {
  constexpr int kLanes = HD / 8, kRowsPerPass = 256 / kLanes, kPasses = kOneBlockPositions / kRowsPerPass;
  const int part = threadIdx.x % kLanes, slot = threadIdx.x / kLanes, t = threadIdx.x;
  uint4 kr[kPasses], vr[kPasses];
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = slot + u * kRowsPerPass;
    const u64 at = static_cast<u64>(j) * kv_row + part * 8;
    kr[u] = j < cached ? *reinterpret_cast<const uint4*>(k + at) : zero_uint4();
    vr[u] = j < cached ? *reinterpret_cast<const uint4*>(v + at) : zero_uint4();
  }
  between();
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = slot + u * kRowsPerPass;
    if (j >= cached && j < n) {
      kr[u] = *reinterpret_cast<const uint4*>(own_k + part * 8);
      vr[u] = *reinterpret_cast<const uint4*>(own_v + part * 8);
    }
  }
  float qv[8];
  const float4 q0 = *reinterpret_cast<const float4*>(qh + part * 8), q1 = *reinterpret_cast<const float4*>(qh + part * 8 + 4);
  qv[0] = q0.x, qv[1] = q0.y, qv[2] = q0.z, qv[3] = q0.w, qv[4] = q1.x, qv[5] = q1.y, qv[6] = q1.z, qv[7] = q1.w;
#pragma unroll
  for (int e = 0; e < 8; ++e) qv[e] = round_to_f16(qv[e]);
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const float dot = row_dot<kLanes>(kr[u], qv);
    const int j = slot + u * kRowsPerPass;
    if (part == 0 && j < n) s[j] = dot * scale;
  }
  __syncthreads();
  const float sv = t < n ? s[t] : -__int_as_float(0x7f800000);
  const float M = block_max(sv);
  const float ev = t < n ? expf(sv - M) : 0.0f;
  const float L = block_sum(ev);
  s[t] = round_to_f16(ev / L);  // each thread rewrites only its own score; block_sum's barriers ordered the reads
  __syncthreads();
  float acc[8] = {};
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const float pj = s[slot + u * kRowsPerPass];  // 0 past n
    float vv[8];
    unpack_f16x8(vr[u], vv);
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[e] += pj * vv[e];
  }
  __shared__ float partial[kRowsPerPass * HD];
#pragma unroll
  for (int e = 0; e < 8; ++e) partial[slot * HD + part * 8 + e] = acc[e];
  __syncthreads();
  for (int d = t; d < HD; d += blockDim.x) {
    float sum = 0.0f;
#pragma unroll 8
    for (int g = 0; g < kRowsPerPass; ++g) sum += partial[g * HD + d];
    oh[d] = sum;
  }
}

// Head h of out = attention over positions [0, n), n <= kOneBlockPositions, launched with 256 threads.
__device__ __forceinline__ void attention_one_block_body(const float* __restrict__ q, const u16* __restrict__ kc, const u16* __restrict__ vc,
                                                         int n, int h, int hd, int group, int kv_row, float scale, float* __restrict__ out) {
  n = min(n, kOneBlockPositions);  // the launcher's promise (as the split launches' chunk count); memory-safe if broken
  const int kvh = h / group, t = threadIdx.x, warp = t >> 5, lane = t & 31;
  __shared__ float s[kOneBlockPositions];
  const u16 *k = kc + kvh * hd, *v = vc + kvh * hd;
  float* oh = out + h * hd;
  if (vector_rows(hd, kv_row, kc) && vector_rows(hd, kv_row, vc) && (reinterpret_cast<u64>(q) & 15) == 0) {
    const auto nothing = [] {};
    if (hd == 128) one_block_vector<128>(k, v, n, n, kv_row, scale, q + h * hd, s, oh, k, v, nothing);
    else one_block_vector<64>(k, v, n, n, kv_row, scale, q + h * hd, s, oh, k, v, nothing);
    return;
  }
  __shared__ float qh[256];
  for (int d = t; d < hd; d += blockDim.x) qh[d] = round_to_f16(q[h * hd + d]);
  __syncthreads();
  for (int j = warp; j < n; j += blockDim.x >> 5) {
    const u16* kj = k + static_cast<u64>(j) * kv_row;
    float dot = 0.0f;
    for (int d = lane; d < hd; d += 32) dot += f16_to_f32(kj[d]) * qh[d];
    dot = warp_sum(dot);
    if (lane == 0) s[j] = dot * scale;
  }
  __syncthreads();
  const float sv = t < n ? s[t] : -__int_as_float(0x7f800000);
  const float M = block_max(sv);
  const float ev = t < n ? expf(sv - M) : 0.0f;
  const float L = block_sum(ev);
  s[t] = round_to_f16(ev / L);
  __syncthreads();
  __shared__ float part[256];
  const int groups = max(1, static_cast<int>(blockDim.x) / hd), d = t % hd, g = t / hd;
  if (g < groups) {
    float acc = 0.0f;
    for (int j = g; j < n; j += groups) acc += s[j] * f16_to_f32(v[static_cast<u64>(j) * kv_row + d]);
    part[t] = acc;
  }
  __syncthreads();
  for (int dd = t; dd < hd; dd += blockDim.x) {
    float acc = 0.0f;
    for (int gg = 0; gg < groups; ++gg) acc += part[gg * hd + dd];
    oh[dd] = acc;
  }
}

// Note [8-bit KV copy]
// Past a few thousand positions a decode token's attention streams more bytes than its weights (a 7B
// without GQA: 8.6 GB of f16 K and V at 16K positions against 4.0 GB). With --decode-attention q8 a
// sequence keeps, beside its f16 cache, a copy in Q8_0's arithmetic: per 32 values of a row an f16 scale
// d = f16(absmax / 127) and round(x / d) as int8, the bytes of the CPU's quantize(Q8_0) (kv_quantize_q8),
// 34 bytes per 32 values instead of 64. The split attention kernels read the copy (the _q8 kernels: the
// same chunks, statistics and f16-rounded weights, K and V taken as d * q). The f16 cache stays what
// everything else reads and writes (prompt passes, the batched step, one block per head at short
// contexts); the decode step appends its position to the copy with its rope (rope_append_q8, Note [Rope and
// the 8-bit copy in one launch]), and the copy is brought up to date for positions written elsewhere before a
// decode step reads it, finished inside the prompt's forward (forward_cuda.cpp).
constexpr int kQ8Block = 32;

// The 16 int8 values of raw as floats: each byte made unsigned (+128) and placed in the low mantissa of
// 2^23 by one byte permute, then one exact subtraction; int -> float conversions run at 16 per clock per
// SM on sm_90, about what a 3 TB/s stream of bytes needs.
__device__ __forceinline__ void unpack_i8x16(const uint4& r, float* f) {
  const u32 w[4] = {r.x ^ 0x80808080u, r.y ^ 0x80808080u, r.z ^ 0x80808080u, r.w ^ 0x80808080u};
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int b = 0; b < 4; ++b) f[4 * i + b] = __int_as_float(__byte_perm(w[i], 0x4b00u, 0x5440u | b)) - 8388736.0f;
}

// The dot product of q's 16 values qv with a lane's 16 int8 values of a key row, times their f16 scale dh,
// summed over the kLanes lanes that share the row: the _q8 kernels' scores all take it, so that theirs
// are the same bits.
template <int kLanes>
__device__ __forceinline__ float row_dot_q8(uint4 raw, u16 dh, const float* qv) {
  float kv[16];
  unpack_i8x16(raw, kv);
  float dot = 0.0f;
#pragma unroll
  for (int e = 0; e < 16; ++e) dot += kv[e] * qv[e];
  dot *= f16_to_f32(dh);
#pragma unroll
  for (int o = kLanes / 2; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
  return dot;
}

// One block of the _q8 kernels covers kQ8Keys positions (kQ8Keys / kChunk chunks of the scratch): its
// bytes per block are then the f16 kernels' (a block of 64 positions moved 8 KB per head and took as long
// as the f16 kernels' 16 KB: per-block latency, not bandwidth, measured on the H200).
constexpr int kQ8Keys = 256;

// Note [Swizzled runs of 16 floats]
// The _q8 kernels' lanes each read q's values [16 part, 16 part + 16) from shared memory and write their
// 16 sums of V to [16 part, 16 part + 16) of their group's row of partials. 16 floats are 64 bytes, so
// the 8 lanes of a 16-byte access phase (parts 0-7) fall on 2 different 16-byte bank groups, 4 lanes
// each: Nsight Compute counted 58% of the one-pass kernel's shared wavefronts as excess at 16K
// positions (1.6 M of 2.8 M; the same lease: its time 53.6 us, DRAM 57%). With TRUENO_ATTENTION_Q8_SWIZZLE
// the 4-float group g of a run is stored at g ^ x, x = the lane's part / 2 (plus its group's place in the
// access phase for the partials), so the 8 lanes meet 8 bank groups. Measured on the H200 (2026-12-03,
// 7B tg64, --decode-attention q8, both with TRUENO_ATTENTION_Q8_MIN_BLOCKS=4, two rounds): 249.3 / 249.9
// tok/s at 16K with it, 250.8 / 250.8 without; the conflicts are not what bounds the kernel. It stays off.
#ifndef TRUENO_ATTENTION_Q8_SWIZZLE
#define TRUENO_ATTENTION_Q8_SWIZZLE 0
#endif
// Note [V before the softmax] (1), or the softmax first (0, for comparison).
#ifndef TRUENO_ATTENTION_Q8_V_EARLY
#define TRUENO_ATTENTION_Q8_V_EARLY 1
#endif
__device__ __forceinline__ int swizzle16(int e, int x) { return TRUENO_ATTENTION_Q8_SWIZZLE ? (((e >> 2) ^ x) << 2) | (e & 3) : e; }
// Where q's value d is staged in qh for scores_q8_vector (part = d / 16).
__device__ __forceinline__ int q8_q_slot(int d) { return (d & ~15) | swizzle16(d & 15, (d >> 5) & 3); }
// Where value e of part `part` of group `grp`'s partials row goes (kLanes = HD / 16 parts per row).
template <int kLanes>
__device__ __forceinline__ int q8_partial_slot(int part, int grp, int e) {
  return part * 16 + swizzle16(e, ((part >> 1) + grp * (kLanes / 2)) & 3);
}

// sc[j - j0] = (k_j . qh) * scale for the block's keys j0 <= j < j1 (at most kQ8Keys) from the 8-bit copy:
// k = the KV head's column of the values [n][kv_row], kd of the scales [n][kv_row / 32]; 16 values (one
// load) per lane, HD / 16 lanes a row, every load of the block in flight at once.
template <int HD>
__device__ __forceinline__ void scores_q8_vector(const i8* __restrict__ k, const u16* __restrict__ kd, int j0, int j1, int kv_row,
                                                 float scale, const float* __restrict__ qh, float* __restrict__ sc) {
  constexpr int kLanes = HD / 16, kKeysPerPass = 256 / kLanes, kPasses = kQ8Keys / kKeysPerPass;
  const int part = threadIdx.x % kLanes, slot = threadIdx.x / kLanes, scales = kv_row / kQ8Block;
  float qv[16];
#pragma unroll
  for (int e = 0; e < 16; ++e) qv[e] = qh[part * 16 + swizzle16(e, (part >> 1) & 3)];
  uint4 raw[kPasses];
  u16 dh[kPasses];
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = j0 + slot + u * kKeysPerPass;
    raw[u] = j < j1 ? *reinterpret_cast<const uint4*>(k + static_cast<u64>(j) * kv_row + part * 16) : zero_uint4();
    dh[u] = j < j1 ? kd[static_cast<u64>(j) * scales + part / 2] : 0;
  }
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const float dot = row_dot_q8<kLanes>(raw[u], dh[u], qv);
    const int j = j0 + slot + u * kKeysPerPass;
    if (part == 0 && j < j1) sc[j - j0] = dot * scale;
  }
}

// p[t] = exp(p[t] - m) for the block's `count` scores (256 threads, one each), m their maximum; ml gets m and
// l = the sum of the exps (thread 0). Every thread sees the new p on return.
__device__ __forceinline__ void softmax_block_scores(float* __restrict__ p, int count, float* __restrict__ ml) {
  const int t = threadIdx.x;
  const float sv = t < count ? p[t] : -__int_as_float(0x7f800000);
  const float m = block_max(sv);
  const float e = t < count ? expf(sv - m) : 0.0f;
  const float l = block_sum(e);
  p[t] = e;  // each thread rewrites only its own score; block_sum's barriers ordered the reads
  __syncthreads();
  if (t == 0) ml[0] = m, ml[1] = l;
}

// Note [V before the softmax]
// In the one pass (kSoftmax) the block's V rows are asked for before the softmax over its scores: the rows
// do not depend on them, so their round trip overlaps the two block reductions and the exps, which then
// no longer stand between the keys' arithmetic and the values' loads. p holds the scores on entry and
// exp(s - m) after; ml gets m and l. The same arithmetic in the same order either way.

// oc[d] = sum over the block's keys of p[j - j0] v_j[d] from the 8-bit copy (v, vd as k, kd above);
// partial: shared memory for [256 / (HD / 16)][HD] floats (4096 for either head size). With kSoftmax, p
// holds the scores first (Note [V before the softmax]).
template <int HD, bool kSoftmax>
__device__ __forceinline__ void weights_v_q8_vector(const i8* __restrict__ v, const u16* __restrict__ vd, int j0, int j1, int kv_row,
                                                    float* __restrict__ p, float* __restrict__ partial, float* __restrict__ oc,
                                                    float* __restrict__ ml) {
  constexpr int kLanes = HD / 16, kGroups = 256 / kLanes, kPasses = kQ8Keys / kGroups;
  const int part = threadIdx.x % kLanes, grp = threadIdx.x / kLanes, scales = kv_row / kQ8Block;
  uint4 raw[kPasses];
  u16 dh[kPasses];
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = j0 + grp + u * kGroups;
    raw[u] = j < j1 ? *reinterpret_cast<const uint4*>(v + static_cast<u64>(j) * kv_row + part * 16) : zero_uint4();
    dh[u] = j < j1 ? vd[static_cast<u64>(j) * scales + part / 2] : 0;
  }
  if (kSoftmax) softmax_block_scores(p, j1 - j0, ml);
  float acc[16] = {};
#pragma unroll
  for (int u = 0; u < kPasses; ++u) {
    const int j = j0 + grp + u * kGroups;
    const float pj = j < j1 ? p[j - j0] * f16_to_f32(dh[u]) : 0.0f;
    float vv[16];
    unpack_i8x16(raw[u], vv);
#pragma unroll
    for (int e = 0; e < 16; ++e) acc[e] += pj * vv[e];
  }
#pragma unroll
  for (int e = 0; e < 16; ++e) partial[grp * HD + q8_partial_slot<kLanes>(part, grp, e)] = acc[e];
  if (!TRUENO_ATTENTION_Q8_SWIZZLE) {
    sum_groups<HD, kGroups>(partial, oc);
    return;
  }
  __syncthreads();  // sum_groups, reading the partials from their slots
  for (int d = threadIdx.x; d < HD; d += blockDim.x) {
    float sum = 0.0f;
#pragma unroll 8
    for (int g = 0; g < kGroups; ++g) sum += partial[g * HD + q8_partial_slot<kLanes>(d >> 4, g, d & 15)];
    oc[d] = sum;
  }
}

// attention_scores_body over the 8-bit copy (k8, kd: one layer's values and scales) for the kQ8Keys
// positions of block `block`, each of its chunks' statistics as there (grid_chunks: the scratch's chunk
// stride); head sizes 64 and 128 only, 256 threads (the launcher checks).
__device__ __forceinline__ void attention_scores_q8_body(const float* __restrict__ q, const i8* __restrict__ k8, const u16* __restrict__ kd,
                                                         int n, int h, int block, int grid_chunks, int hd, int group, int kv_row,
                                                         float scale, int n_ctx, float* __restrict__ s, float* __restrict__ ml) {
  const int j0 = block * kQ8Keys;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kQ8Keys), kvh = h / group;
  __shared__ float qh[256];
  __shared__ float sc[kQ8Keys];
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qh[q8_q_slot(d)] = round_to_f16(q[h * hd + d]);
  __syncthreads();
  if (hd == 128) scores_q8_vector<128>(k8 + kvh * hd, kd + kvh * hd / kQ8Block, j0, j1, kv_row, scale, qh, sc);
  else scores_q8_vector<64>(k8 + kvh * hd, kd + kvh * hd / kQ8Block, j0, j1, kv_row, scale, qh, sc);
  __syncthreads();
  for (int c = 0; c < kQ8Keys / kChunk && j0 + c * kChunk < j1; ++c) {
    const int cj = j0 + c * kChunk;
    chunk_stats(sc, c * kChunk, min(kChunk, j1 - cj), s + static_cast<u64>(h) * n_ctx + cj,
                ml + (h * grid_chunks + block * (kQ8Keys / kChunk) + c) * 2);
  }
}

// attention_weights_v_body over the 8-bit copy (v8, vd) for block `block`'s positions: their weighted sum
// goes to the partial of its first chunk (the others stay unwritten: attention_combine_wide reads these).
__device__ __forceinline__ void attention_weights_v_q8_body(const i8* __restrict__ v8, const u16* __restrict__ vd, int n, int h, int block,
                                                            int grid_chunks, int hd, int group, int kv_row, int n_ctx,
                                                            const float* __restrict__ s, const float* __restrict__ ml,
                                                            float* __restrict__ o) {
  const int j0 = block * kQ8Keys;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kQ8Keys), kvh = h / group, first = block * (kQ8Keys / kChunk);
  __shared__ float p[kQ8Keys];
  __shared__ float partial[4096];
  chunk_weights(s, ml, n, h, j0, j1, grid_chunks, n_ctx, p);
  float* oc = o + (static_cast<u64>(h) * grid_chunks + first) * hd;
  // (ml unused without the softmax: oc stands in, as decy takes only buffer pointers)
  if (hd == 128) weights_v_q8_vector<128, false>(v8 + kvh * hd, vd + kvh * hd / kQ8Block, j0, j1, kv_row, p, partial, oc, oc);
  else weights_v_q8_vector<64, false>(v8 + kvh * hd, vd + kvh * hd / kQ8Block, j0, j1, kv_row, p, partial, oc, oc);
}

// Note [One pass over the 8-bit copy]
// The two passes above (scores, then weights times V) round each weight to f16 after the global softmax,
// as the CPU does; the second pass waits for every block of the first, and the scores travel through the
// scratch (2 MB per 7B layer at 16K positions). Over the 8-bit copy, whose values already differ from the
// f16 cache's (its contract bounds them against both), one pass does what flash-decoding does: each block
// takes its own maximum m and sum l, weights its V rows by exp(s - m) in f32 and writes the unnormalized
// sum with (m, l); attention_combine_rescaled scales every block's sum by exp(m - M) / L. The weights are
// then not rounded to f16 (the CPU's are): a relative difference of at most 2^-11 per weight, measured
// in the copy's test. TRUENO_ATTENTION_ONE_PASS_Q8=0 (a tuning knob) takes the two passes.
__device__ __forceinline__ void attention_one_pass_q8_body(const float* __restrict__ q, const i8* __restrict__ k8, const u16* __restrict__ kd,
                                                           const i8* __restrict__ v8, const u16* __restrict__ vd, int n, int h, int block,
                                                           int grid_chunks, int hd, int group, int kv_row, float scale,
                                                           float* __restrict__ ml, float* __restrict__ o) {
  const int j0 = block * kQ8Keys;
  if (j0 >= n) return;
  const int j1 = min(n, j0 + kQ8Keys), kvh = h / group, t = threadIdx.x, slot = (h * grid_chunks + block * (kQ8Keys / kChunk));
  __shared__ float qh[256];
  __shared__ float sc[kQ8Keys];
  __shared__ float partial[4096];
  for (int d = t; d < hd; d += blockDim.x) qh[q8_q_slot(d)] = round_to_f16(q[h * hd + d]);
  __syncthreads();
  if (hd == 128) scores_q8_vector<128>(k8 + kvh * hd, kd + kvh * hd / kQ8Block, j0, j1, kv_row, scale, qh, sc);
  else scores_q8_vector<64>(k8 + kvh * hd, kd + kvh * hd / kQ8Block, j0, j1, kv_row, scale, qh, sc);
  __syncthreads();
  if (!TRUENO_ATTENTION_Q8_V_EARLY) softmax_block_scores(sc, j1 - j0, ml + 2 * slot);
  if (hd == 128)
    weights_v_q8_vector<128, TRUENO_ATTENTION_Q8_V_EARLY != 0>(v8 + kvh * hd, vd + kvh * hd / kQ8Block, j0, j1, kv_row, sc, partial,
                                                             o + static_cast<u64>(slot) * hd, ml + 2 * slot);
  else
    weights_v_q8_vector<64, TRUENO_ATTENTION_Q8_V_EARLY != 0>(v8 + kvh * hd, vd + kvh * hd / kQ8Block, j0, j1, kv_row, sc, partial,
                                                            o + static_cast<u64>(slot) * hd, ml + 2 * slot);
}

// out[h] = sum over the blocks b of kQ8Keys positions of o_b exp(m_b - M) / sum_b l_b exp(m_b - M), M the
// largest m_b (Note [One pass over the 8-bit copy]); 256 threads, head sizes 64 and 128 (the launcher's).
// Note [The combine's loads first]: the blocks' sums do not depend on M, so each thread issues its first
// kCombineAhead 16-byte loads of them before it reads (m, l) and reduces M and L, and later ones
// kCombineAhead at a time: one round trip where a loop behind the reductions took one per block (33 at
// 16K positions; 8.9 us per 7B layer on the H200, 3.3 after). 9 ahead (a tuning knob, 8 before): the
// H200's split launch has 66 splits at long contexts (4 blocks an SM, 8 groups of KV heads), and 8 x 8
// loads ahead left two for a second round trip. Measured (2026-12-04, 7B tg64 --decode-attention q8 at
// 16K, two rounds, one lease): 303.8 / 303.2 tok/s against 301.4 / 302.2 with 8; at 32K 227.9 / 228.3
// against 227.8 / 227.7. The sums are added in the same order either way (the same bits).
#ifndef TRUENO_ATTENTION_COMBINE_AHEAD
#define TRUENO_ATTENTION_COMBINE_AHEAD 9
#endif
constexpr int kCombineAhead = TRUENO_ATTENTION_COMBINE_AHEAD < 1 ? 1 : TRUENO_ATTENTION_COMBINE_AHEAD;
// blocks: the sums to combine, `stride` chunks of the scratch apart (kQ8Keys / kChunk for the one pass's).
__device__ __forceinline__ void attention_combine_rescaled_body(const float* __restrict__ o, const float* __restrict__ ml, int blocks,
                                                                int stride, int h, int hd, int max_chunks, float* __restrict__ out) {
  const int t = threadIdx.x, lanes = hd / 4, groups = blockDim.x / lanes, c = t % lanes, g = t / lanes,
            step = stride * lanes;  // float4s from one block's sum to the next's
  const float* mlh = ml + static_cast<u64>(h) * max_chunks * 2;
  const float4* oh = reinterpret_cast<const float4*>(o + static_cast<u64>(h) * max_chunks * hd);
  float4 ahead[kCombineAhead];
#pragma unroll
  for (int i = 0; i < kCombineAhead; ++i) {
    const int b = g + i * groups;
    ahead[i] = b < blocks ? oh[b * step + c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  float mt = -__int_as_float(0x7f800000);
  for (int b = t; b < blocks; b += blockDim.x) mt = fmaxf(mt, mlh[2 * b * stride]);
  const float M = block_max(mt);
  float lt = 0.0f;
  for (int b = t; b < blocks; b += blockDim.x) lt += mlh[2 * b * stride + 1] * expf(mlh[2 * b * stride] - M);
  const float L = block_sum(lt);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  int b0 = g;
  while (true) {
#pragma unroll
    for (int i = 0; i < kCombineAhead; ++i) {
      const int b = b0 + i * groups;
      const float w = b < blocks ? expf(mlh[2 * b * stride] - M) : 0.0f;
      acc.x += ahead[i].x * w, acc.y += ahead[i].y * w, acc.z += ahead[i].z * w, acc.w += ahead[i].w * w;
    }
    if (b0 + kCombineAhead * groups >= blocks) break;
#pragma unroll
    for (int i = 0; i < kCombineAhead; ++i) {
      const int b = b0 + (kCombineAhead + i) * groups;
      ahead[i] = b < blocks ? oh[b * step + c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    b0 += kCombineAhead * groups;
  }
  __shared__ float4 part[256];
  part[t] = acc;
  __syncthreads();
  if (g == 0) {
    float4 sum = part[t];
    for (int gg = 1; gg < groups; ++gg) {
      const float4 v = part[t + gg * lanes];
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    reinterpret_cast<float4*>(out + h * hd)[c] = make_float4(sum.x / L, sum.y / L, sum.z / L, sum.w / L);
  }
}

// out[h] = the sum of the partials of the blocks of `block_positions` positions (64: the f16 kernels',
// kQ8Keys: the _q8 kernels'; each in its first chunk's slot), 256 threads: 256 / hd groups of threads sum
// a stride of the blocks each, then one sum in shared memory. (attention_combine, one thread per value
// over every chunk, is a chain of n / 64 loads: 256 at 16K positions.)
__device__ __forceinline__ void attention_combine_wide_body(const float* __restrict__ o, int n, int h, int hd, int max_chunks,
                                                            int block_positions, float* __restrict__ out) {
  const int stride = block_positions / kChunk, blocks = (n + block_positions - 1) / block_positions;
  const int t = threadIdx.x, groups = blockDim.x / hd, d = t % hd, g = t / hd;
  __shared__ float part[256];
  float acc = 0.0f;
  if (g < groups) {
#pragma unroll 8
    for (int b = g; b < blocks; b += groups) acc += o[(static_cast<u64>(h) * max_chunks + b * stride) * hd + d];
  }
  part[t] = acc;
  __syncthreads();
  if (t < hd) {
    float sum = 0.0f;
    for (int gg = 0; gg < groups; ++gg) sum += part[gg * hd + t];
    out[h * hd + t] = sum;
  }
}

// Values [at, at + 32) of a row to the 8-bit copy, one warp (lane = the value x): Q8_0's arithmetic
// as the CPU's quantize (quantize_ref.cpp): d = f16(absmax / 127), q = clamp(nearest_even(x / d), +-127)
// with x / d as x * (1 / d), 0 for a zero block. A warp past the end (!valid) still takes part in the
// shuffles and writes nothing (decy's emulated warps need every thread at every shuffle).
__device__ __forceinline__ void quantize_q8_value(float x, i8* __restrict__ q8, u16* __restrict__ d8, u64 at, bool valid) {
  const int lane = threadIdx.x & 31;
  float amax = fabsf(x);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  // __fdiv_rn: / under NVRTC's --prec-div=true; decy keeps it correctly rounded where a Vulkan driver's
  // division is not (NVIDIA's: 1 block of 521 x 4 differed with /)
  const u16 dh = f32_to_f16_bits(__fdiv_rn(amax, 127.0f));
  const float d = f16_to_f32(dh), id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
  const float r = fminf(fmaxf(x * id, -4194304.0f), 4194304.0f);
  if (!valid) return;
  q8[at + lane] = static_cast<i8>(max(-127, min(127, __float2int_rn(r))));
  if (lane == 0) d8[at / kQ8Block] = dh;
}

__device__ __forceinline__ void quantize_q8_block(const u16* __restrict__ src, i8* __restrict__ q8, u16* __restrict__ d8, u64 at,
                                                  bool valid) {
  quantize_q8_value(valid ? f16_to_f32(src[at + (threadIdx.x & 31)]) : 0.0f, q8, d8, at, valid);
}
