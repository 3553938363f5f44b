// Launchers for the small per-layer decode steps (kernels/layer_ops.cu). Pointers are device pointers;
// every launch is asynchronous on the context's stream.
#pragma once
#include <cstddef>

#include "trueno/cuda/context.h"

namespace trueno::cuda {

struct Q8Activations;  // ops/gemv.h

// out[rows][n] = rmsnorm(x[rows][n]) * w[n].
void rmsnorm(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr out, std::size_t rows, std::size_t n);

struct RopeParams {
  int head_dim, rope_dim;
  float theta_scale;       // base^(-2 / rope_dim), computed on the host as the CPU does
  api::CUdeviceptr freqs;  // [rope_dim / 2] or 0
  bool neox;
};
// The position is an int in device memory (pos), read by the kernels when they run: one captured CUDA
// graph then serves every decode step.

// Rotates v[n_heads][head_dim] in place for position *pos.
void rope(Context& c, api::CUdeviceptr v, int n_heads, api::CUdeviceptr pos, const RopeParams& p);

// k, v [n] -> f16 k_cache[*pos][n], v_cache[*pos][n].
void kv_append(Context& c, api::CUdeviceptr k, api::CUdeviceptr v, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache,
               api::CUdeviceptr pos, int n);

// The most positions attention_decode attends over: chunks of 64 positions are a grid dimension (at most
// 65535); 2^20 is beyond every model's context we know of. The scratch grows with the context.
constexpr int kMaxAttentionPositions = 1 << 20;

// Scratch of attention_decode for a context of n_ctx positions and n_head heads of size hd.
struct AttentionScratch {
  AttentionScratch(Context& c, int n_ctx, int n_head, int hd);
  int n_ctx, n_chunks;
  DeviceBuffer scores, max_sum, partial;
};

// How attention_decode runs: Auto takes one block per head where the launch covers at most
// kOneBlockPositions positions (Note [One block per head], kernels/attention.cuh), else the three split
// launches; Split always splits (the batched step's kernels are the split ones: tests compare the two).
enum class AttentionKernels { Auto, Split };
constexpr int kOneBlockPositions = 256;  // as in kernels/attention.cuh

// Whether attention_decode's split launches end with attention_combine_wide (heads of 64 or 128 values,
// unless TRUENO_ATTENTION_WIDE_COMBINE=0) rather than attention_combine.
bool attention_wide_combine(int hd);
// Whether attention_decode(..., positions, Auto) takes the one-block kernel.
bool attention_one_block(const AttentionScratch& scratch, int positions);

// out[n_head][hd] = attention of q[n_head][hd] over positions [0, *pos] of one layer's f16 cache
// [scratch.n_ctx][kv_row]; head h reads KV head h / group (kernels/layer_ops.cu: one launch of a block per
// head, or three launches split over the sequence). The launches cover `positions` positions (0: the whole
// context), which must exceed *pos when they run: a captured graph for a bucket of positions launches only
// that bucket's chunks.
void attention_decode(Context& c, api::CUdeviceptr q, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                      api::CUdeviceptr pos, AttentionScratch& scratch, int n_head, int hd, int group, int kv_row, int positions = 0,
                      AttentionKernels kernels = AttentionKernels::Auto);

// Note [8-bit KV copy] (kernels/attention.cuh): a sequence's KV cache [n_layer][n_ctx][kv_row] again as
// int8 values with an f16 scale per 32 (Q8_0's arithmetic, the CPU's quantize(Q8_0) bytes), which the
// split decode attention reads instead of the f16 cache (attention_decode_q8): 34 bytes per 32 values.
struct KvCopyQ8 {
  // InvalidArgument unless kv_row is a multiple of 32 and the sizes are positive.
  KvCopyQ8(Context& c, int n_layer, int n_ctx, int kv_row);
  int n_layer, n_ctx, kv_row;
  DeviceBuffer k, kd, v, vd;  // values [n_layer][n_ctx][kv_row]; scales [n_layer][n_ctx][kv_row / 32] (f16)
  std::size_t bytes() const { return k.bytes() + kd.bytes() + v.bytes() + vd.bytes(); }
};
// Whether attention_decode_q8 takes heads of size hd (64 or 128: its 16-byte loads per lane).
bool attention_q8_supports(int hd);
// Positions [first, first + count) of every layer of the f16 caches k_cache, v_cache ([n_layer][n_ctx]
// [kv_row], the copy's shape) to the copy.
void kv_quantize_q8(Context& c, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& copy, int first, int count);
// Position *pos (read when the launch runs, as the decode step's kernels do) of layer `layer` to the copy.
void kv_quantize_q8_at(Context& c, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& copy, int layer, api::CUdeviceptr pos);
// rope_append, then kv_quantize_q8_at, in one launch (Note [Rope and the 8-bit copy in one launch],
// kernels/layer_ops.cu): q, k, the layer's caches (k_cache, v_cache as rope_append's) and layer `layer` of
// the copy as the two leave them, bit for bit. Fusable: heads of a multiple of 32 up to 256, an even rope
// size up to the head's, and TRUENO_ROPE_APPEND_Q8 is not 0; InvalidArgument otherwise.
bool rope_append_q8_fusable(int hd, int rope_dim);
void rope_append_q8(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int n_head, int n_kv, api::CUdeviceptr pos,
                    const RopeParams& p, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& copy, int layer);
// attention_decode's split launches over layer `layer` of the copy (blocks of 256 positions, their own
// combine); q, out, pos, scratch, positions as there. Two passes (scores, then f16-rounded weights times
// V, then attention_combine_wide) or one (Note [One pass over the 8-bit copy], kernels/attention.cuh: f32
// weights per block, attention_combine_rescaled) or split (Note [Split over the 8-bit copy], kernels/
// attention_split.cu: blocks of KV heads walk every splits-th tile through a cp.async ring, a warp per q
// head with its online softmax, attention_combine_splits).
// Default: split where the GPU holds its ring, else one; TRUENO_ATTENTION_SPLIT_Q8=0 and
// TRUENO_ATTENTION_ONE_PASS_Q8=0 step down. InvalidArgument for a head size attention_q8_supports refuses,
// an out not 16-byte aligned, or Split on a GPU without the shared memory for the ring.
enum class Q8Passes { Default, Two, One, Split };
// The split kernel's block (Note [Split over the 8-bit copy]) for n_kv KV heads of `group` q heads each
// and head size hd: `heads` KV heads with their q heads, `ways` warps a q head (threads = 32 heads group
// ways, at most 512), tiles of `rows` positions and the ring's shared memory. heads == 0: the split does
// not apply (a group of more than 16 q heads, a head size attention_q8_supports refuses).
struct AttentionSplitShape {
  int heads = 0, ways = 0, rows = 0, threads = 0;
  unsigned shared_bytes = 0;
};
AttentionSplitShape attention_split_shape(int n_kv, int group, int hd);
// Precondition of the split form (Note [The copy's rows before the wait], kernels/attention_split.cu): the
// copy's rows before *pos, and *pos itself, are settled before the launch (not written by kernels still in
// the stream, which it may overlap); the row at *pos may be written by the kernel just before it.
void attention_decode_q8(Context& c, api::CUdeviceptr q, const KvCopyQ8& copy, int layer, api::CUdeviceptr out, api::CUdeviceptr pos,
                         AttentionScratch& scratch, int n_head, int hd, int group, int positions = 0, Q8Passes passes = Q8Passes::Default);

// Fused (kernels/fused_ops.cu). xn[n] = rmsnorm(x) * w and xq = Q8_K(xn), n = xq.n (a multiple of 256).
void rmsnorm_quantize(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr xn, Q8Activations& xq);
// g[n] = silu(g) * u and gq = Q8_K(g), n = gq.n.
void swiglu_quantize(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, Q8Activations& gq);
// Rotates q[n_head][hd] and k[n_kv][hd] for position *pos and appends k and v [n_kv * hd] to the f16
// caches at *pos (one launch for rope x2 + kv_append).
void rope_append(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int n_head, int n_kv, api::CUdeviceptr pos,
                 const RopeParams& p, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache);

// rope_append and attention_decode's one-block kernel in one launch (Note [Rope inside the attention],
// kernels/layer_ops.cu): out and the caches as the two would leave them, bit for bit; q and k stay
// unrotated. Fusable: the launch covers at most kOneBlockPositions positions (attention_one_block), heads
// of 64 or 128 values, and TRUENO_ROPE_ATTENTION is not 0; InvalidArgument otherwise.
bool rope_attention_fusable(const AttentionScratch& scratch, int positions, int hd, int rope_dim);
void rope_attention_one_block(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int n_head, int n_kv, api::CUdeviceptr pos,
                              const RopeParams& p, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                              const AttentionScratch& scratch, int positions);

// g[n] = silu(g) * u.
void swiglu(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, std::size_t n);
// x[n] += y.
void add_inplace(Context& c, api::CUdeviceptr x, api::CUdeviceptr y, std::size_t n);

}  // namespace trueno::cuda
