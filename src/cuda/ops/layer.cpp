// Launchers for kernels/layer_ops.cu (layer.h).
#include "trueno/cuda/ops/layer.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/strings.h"
#include "cuda/nvrtc.h"
#include "trueno/cuda/ops/gemv.h"

namespace trueno::cuda {
namespace {

api::CUfunction fn(Context& c, const char* name) { return c.function("layer_ops", name); }

unsigned blocks(std::size_t n, unsigned per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

void rmsnorm(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr out, std::size_t rows, std::size_t n) {
  const api::CUfunction f = fn(c, "rmsnorm");
  int nn = static_cast<int>(n);
  void* params[] = {&x, &w, &eps, &out, &nn};
  launch_overlapped(c, f, static_cast<unsigned>(rows), 1, 256, 1, params);
}

void rope(Context& c, api::CUdeviceptr v, int n_heads, api::CUdeviceptr pos, const RopeParams& p) {
  const api::CUfunction f = fn(c, "rope");
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0;
  float ts = p.theta_scale;
  api::CUdeviceptr freqs = p.freqs;
  void* params[] = {&v, &n_heads, &hd, &rd, &pos, &ts, &freqs, &neox};
  launch_overlapped(c, f, blocks(static_cast<std::size_t>(n_heads) * (rd / 2), 128), 1, 128, 1, params);
}

void kv_append(Context& c, api::CUdeviceptr k, api::CUdeviceptr v, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache,
               api::CUdeviceptr pos, int n) {
  const api::CUfunction f = fn(c, "kv_append");
  void* params[] = {&k, &v, &k_cache, &v_cache, &pos, &n};
  launch_overlapped(c, f, blocks(static_cast<std::size_t>(n), 256), 1, 256, 1, params);
}

constexpr int kAttentionChunk = 64;  // as kChunk in kernels/layer_ops.cu

AttentionScratch::AttentionScratch(Context& c, int n_ctx_, int n_head, int hd)
    : n_ctx(n_ctx_),
      n_chunks((n_ctx_ + kAttentionChunk - 1) / kAttentionChunk),
      scores(c, static_cast<std::size_t>(n_head) * n_ctx_ * 4),
      max_sum(c, static_cast<std::size_t>(n_head) * n_chunks * 2 * 4),
      partial(c, static_cast<std::size_t>(n_head) * n_chunks * hd * 4) {
  if (n_ctx_ < 1 || n_ctx_ > kMaxAttentionPositions)
    throw InvalidArgument(strcat("cuda attention: a context of ", n_ctx_, " positions is outside [1, ", kMaxAttentionPositions, "]"));
  if (hd < 1 || hd > 256) throw InvalidArgument(strcat("cuda attention: head size ", hd, " is outside [1, 256]"));
}

// A tuning knob (TRUENO_CUDA_DEFINES, nvrtc.h): TRUENO_ATTENTION_ONE_BLOCK=0 always splits, for comparison.
const bool kOneBlock = tuning_define("TRUENO_ATTENTION_ONE_BLOCK", 1) != 0;

// The f16 split attention sums its chunks with attention_combine_wide (256 threads per head) for head
// sizes 64 and 128; TRUENO_ATTENTION_WIDE_COMBINE=0 takes attention_combine (one thread per value), for
// comparison (H200, 7B tg128: 184.3 -> 189.4 tok/s at 16K positions, 128.9 -> 134.8 at 32K).
const bool kWideCombine = tuning_define("TRUENO_ATTENTION_WIDE_COMBINE", 1) != 0;

// The head sizes the vector kernels take: 16 bytes per lane, 256 threads (attention_combine_wide, the _q8 kernels).
bool attention_q8_supports(int hd) { return hd == 64 || hd == 128; }

bool attention_wide_combine(int hd) { return kWideCombine && attention_q8_supports(hd); }

bool attention_one_block(const AttentionScratch& a, int positions) {
  return kOneBlock && (positions == 0 ? a.n_ctx : positions) <= kOneBlockPositions;
}

void attention_decode(Context& c, api::CUdeviceptr q, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                      api::CUdeviceptr pos, AttentionScratch& a, int n_head, int hd, int group, int kv_row, int positions,
                      AttentionKernels kernels) {
  if (positions < 0 || positions > a.n_ctx)
    throw InvalidArgument(strcat("cuda attention: ", positions, " positions exceed the scratch's context of ", a.n_ctx));
  float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  if (kernels == AttentionKernels::Auto && attention_one_block(a, positions)) {  // Note [One block per head]
    void* p[] = {&q, &k_cache, &v_cache, &pos, &hd, &group, &kv_row, &scale, &out};
    launch_overlapped(c, fn(c, "attention_one_block"), static_cast<unsigned>(n_head), 1, 256, 1, p);
    return;
  }
  const api::CUfunction scores = fn(c, "attention_scores"), weights_v = fn(c, "attention_weights_v"),
                         combine = fn(c, "attention_combine");
  const int chunks_used = positions == 0 ? a.n_chunks : (positions + kAttentionChunk - 1) / kAttentionChunk;
  int n_ctx = a.n_ctx, max_chunks = chunks_used;  // the partials' stride is the launched chunk count
  api::CUdeviceptr s = a.scores.ptr(), ml = a.max_sum.ptr(), o = a.partial.ptr();
  const auto heads = static_cast<unsigned>(n_head), chunks = static_cast<unsigned>(chunks_used);
  void* p1[] = {&q, &k_cache, &pos, &hd, &group, &kv_row, &scale, &n_ctx, &s, &ml};
  launch_overlapped(c, scores, heads, chunks, 256, 1, p1);
  void* p2[] = {&v_cache, &pos, &hd, &group, &kv_row, &n_ctx, &s, &ml, &o};
  launch_overlapped(c, weights_v, heads, chunks, 256, 1, p2);
  if (attention_wide_combine(hd)) {  // attention_combine_wide_body (kernels/attention.cuh)
    int block_positions = kAttentionChunk;
    void* p3[] = {&o, &pos, &hd, &max_chunks, &block_positions, &out};
    launch_overlapped(c, fn(c, "attention_combine_wide"), heads, 1, 256, 1, p3);
    return;
  }
  void* p3[] = {&o, &pos, &hd, &max_chunks, &out};
  launch_overlapped(c, combine, heads, 1, static_cast<unsigned>(std::min(hd, 256)), 1, p3);
}

KvCopyQ8::KvCopyQ8(Context& c, int n_layer_, int n_ctx_, int kv_row_) : n_layer(n_layer_), n_ctx(n_ctx_), kv_row(kv_row_) {
  if (n_layer < 1 || n_ctx < 1 || kv_row < 32 || kv_row % 32 != 0)
    throw InvalidArgument(strcat("cuda 8-bit KV copy: ", n_layer, " layers x ", n_ctx, " positions x ", kv_row,
                                 " values (needs positive sizes and rows of a multiple of 32 values)"));
  const std::size_t values = static_cast<std::size_t>(n_layer) * n_ctx * kv_row;
  k = DeviceBuffer(c, values), v = DeviceBuffer(c, values);
  kd = DeviceBuffer(c, values / 32 * 2), vd = DeviceBuffer(c, values / 32 * 2);
}

namespace {

// kv_quantize_q8 over `layers` layers from layer `layer`, positions [first, first + count) or *pos.
void launch_kv_quantize(Context& c, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& q, int layer, int layers,
                        api::CUdeviceptr pos, int first, int count) {
  const std::uint64_t stride = static_cast<std::uint64_t>(q.n_ctx) * q.kv_row, at = stride * layer;
  api::CUdeviceptr kc = k_cache + at * 2, vc = v_cache + at * 2, k8 = q.k.ptr() + at, v8 = q.v.ptr() + at,
                   kd = q.kd.ptr() + at / 32 * 2, vd = q.vd.ptr() + at / 32 * 2;
  int kv_row = q.kv_row;
  std::uint64_t layer_stride = stride;
  void* p[] = {&kc, &vc, &k8, &kd, &v8, &vd, &pos, &first, &count, &kv_row, &layer_stride};
  const std::size_t warps = static_cast<std::size_t>(count) * (kv_row / 32);
  launch_overlapped(c, fn(c, "kv_quantize_q8"), blocks(warps, 8), 2 * static_cast<unsigned>(layers), 256, 1, p);
}

}  // namespace

void kv_quantize_q8(Context& c, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& copy, int first, int count) {
  if (first < 0 || count < 0 || first + count > copy.n_ctx)
    throw InvalidArgument(strcat("cuda 8-bit KV copy: positions [", first, ", ", first + count, ") outside a context of ", copy.n_ctx));
  if (count > 0) launch_kv_quantize(c, k_cache, v_cache, copy, 0, copy.n_layer, 0, first, count);
}

void kv_quantize_q8_at(Context& c, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& copy, int layer, api::CUdeviceptr pos) {
  if (layer < 0 || layer >= copy.n_layer) throw InvalidArgument(strcat("cuda 8-bit KV copy: layer ", layer, " of ", copy.n_layer));
  launch_kv_quantize(c, k_cache, v_cache, copy, layer, 1, pos, 0, 1);
}

// A tuning knob: TRUENO_ROPE_APPEND_Q8=0 keeps rope_append and kv_quantize_q8_at apart, for comparison.
const bool kRopeAppendQ8 = tuning_define("TRUENO_ROPE_APPEND_Q8", 1) != 0;

bool rope_append_q8_fusable(int hd, int rope_dim) {
  return kRopeAppendQ8 && hd % 32 == 0 && hd <= 256 && rope_dim > 0 && rope_dim % 2 == 0 && rope_dim <= hd;
}

void rope_append_q8(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int n_head, int n_kv, api::CUdeviceptr pos,
                    const RopeParams& p, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, KvCopyQ8& copy, int layer) {
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0, group = n_kv > 0 ? n_head / n_kv : 0, kv_row = n_kv * hd;
  if (!rope_append_q8_fusable(hd, rd) || n_kv < 1 || n_head % n_kv != 0 || kv_row != copy.kv_row || layer < 0 || layer >= copy.n_layer)
    throw InvalidArgument(strcat("cuda rope + append to the 8-bit copy in one launch: ", n_head, "/", n_kv, " heads of ", hd, " (rope over ",
                                 rd, "), layer ", layer, " of a copy of ", copy.n_layer, " x ", copy.kv_row,
                                 " (takes heads of a multiple of 32 up to 256, an even rope size up to the head's)"));
  const std::uint64_t at = static_cast<std::uint64_t>(layer) * copy.n_ctx * copy.kv_row;
  api::CUdeviceptr k8 = copy.k.ptr() + at, v8 = copy.v.ptr() + at, kd = copy.kd.ptr() + at / 32 * 2, vd = copy.vd.ptr() + at / 32 * 2;
  float ts = p.theta_scale;
  api::CUdeviceptr freqs = p.freqs;
  void* params[] = {&q, &k, &v, &hd, &rd, &pos, &ts, &freqs, &neox, &group, &kv_row, &k_cache, &v_cache, &k8, &kd, &v8, &vd};
  launch_overlapped(c, fn(c, "rope_append_q8"), static_cast<unsigned>(n_kv), 1, 256, 1, params);
}

// TRUENO_ATTENTION_ONE_PASS_Q8=0 (a tuning knob): Q8Passes::Default takes the two passes.
const bool kOnePassQ8 = tuning_define("TRUENO_ATTENTION_ONE_PASS_Q8", 1) != 0;
// Note [Split over the 8-bit copy] (kernels/attention_split.cu): TRUENO_ATTENTION_SPLIT_Q8=0 (a tuning knob)
// keeps the one pass for Q8Passes::Default; TRUENO_ATTENTION_SPLIT_STAGES, the ring's tiles, is the kernel's define.
const bool kSplitQ8 = tuning_define("TRUENO_ATTENTION_SPLIT_Q8", 1) != 0;
const int kSplitStages = std::max(2, tuning_define("TRUENO_ATTENTION_SPLIT_STAGES", 2));  // as the kernel clamps it
// The block's warps (at least a KV head's group of q heads; at most 16: __launch_bounds__(512)) and a
// tile's bytes of K and V, tuning knobs. Measured on the H200 (2026-12-04, 7B tg64 --decode-attention q8,
// tok/s at 16K / 32K, two rounds, one lease): 4 warps and 16 KB 303.6 / 303.5 and 228.1 / 227.6; 2 and 8 KB
// 305.0 / 304.2 and 228.1 / 228.6; 8 and 32 KB 298.3 / 299.3 and 225.2 / 225.6; 16 and 64 KB 289.3 / 288.1
// and 222.7 / 222.7; the one pass 294.2 / 294.8 and 219.9 / 220.0. Smaller blocks, several an SM, win.
const int kSplitWarps = std::clamp(tuning_define("TRUENO_ATTENTION_SPLIT_WARPS", 4), 1, 16);
const int kSplitTileBytes = tuning_define("TRUENO_ATTENTION_SPLIT_TILE", 16384);

AttentionSplitShape attention_split_shape(int n_kv, int group, int hd) {
  const int warps = std::max(kSplitWarps, group);  // a KV head's whole group of q heads in one block
  AttentionSplitShape s;
  if (warps > 16 || n_kv < 1 || group < 1 || !attention_q8_supports(hd)) return s;
  for (int g = 1; g <= n_kv; ++g)
    if (n_kv % g == 0 && g * group <= warps) s.heads = g;
  s.ways = warps / (s.heads * group);
  const int run = s.ways * 4 * 512 / hd;  // every way's run: 4 passes of 32 / (hd / 16) rows
  s.rows = std::max(run, kSplitTileBytes / (2 * s.heads * hd) / run * run);
  s.threads = 32 * s.heads * group * s.ways;
  s.shared_bytes = static_cast<unsigned>(kSplitStages * 2 * s.rows * s.heads * hd * 17 / 16);
  return s;
}

// The split kernel with its ring's shared memory allowed, and how many of its blocks an SM holds (0: none,
// e.g. a GPU with less shared memory per block than the ring takes, or a group of more than 16 q heads;
// the one pass then serves).
int split_blocks_per_sm(Context& c, api::CUfunction f, const AttentionSplitShape& s) {
  if (s.heads == 0) return 0;
  if (c.driver().func_set_attribute(f, api::kFuncAttrMaxDynamicSharedBytes, static_cast<int>(s.shared_bytes)) != 0) return 0;
  int per_sm = 0;
  if (c.driver().occupancy_max_blocks(&per_sm, f, s.threads, s.shared_bytes) != 0) return 0;
  return per_sm;
}

void attention_decode_q8(Context& c, api::CUdeviceptr q, const KvCopyQ8& copy, int layer, api::CUdeviceptr out, api::CUdeviceptr pos,
                         AttentionScratch& a, int n_head, int hd, int group, int positions, Q8Passes passes) {
  if (!attention_q8_supports(hd)) throw InvalidArgument(strcat("cuda attention over the 8-bit KV copy: head size ", hd, " (takes 64 or 128)"));
  if (positions < 0 || positions > a.n_ctx || a.n_ctx > copy.n_ctx || layer < 0 || layer >= copy.n_layer)
    throw InvalidArgument(strcat("cuda attention over the 8-bit KV copy: ", positions, " positions, layer ", layer, ", a scratch of ", a.n_ctx,
                                 " positions, a copy of ", copy.n_layer, " x ", copy.n_ctx));
  if (out % 16 != 0) throw InvalidArgument("cuda attention over the 8-bit KV copy: the output must be 16-byte aligned (float4 stores)");
  float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const std::uint64_t at = static_cast<std::uint64_t>(layer) * copy.n_ctx * copy.kv_row;
  api::CUdeviceptr k8 = copy.k.ptr() + at, v8 = copy.v.ptr() + at, kd = copy.kd.ptr() + at / 32 * 2, vd = copy.vd.ptr() + at / 32 * 2;
  const int chunks_used = positions == 0 ? a.n_chunks : (positions + kAttentionChunk - 1) / kAttentionChunk;
  int n_ctx = a.n_ctx, max_chunks = chunks_used, kv_row = copy.kv_row;
  api::CUdeviceptr s = a.scores.ptr(), ml = a.max_sum.ptr(), o = a.partial.ptr();
  // One block per head and kQ8Keys positions (kernels/attention.cuh), four of the scratch's chunks.
  const auto heads = static_cast<unsigned>(n_head), q8_blocks = static_cast<unsigned>((chunks_used + 3) / 4);
  if (passes == Q8Passes::Split || (passes == Q8Passes::Default && kSplitQ8)) {  // Note [Split over the 8-bit copy]
    const api::CUfunction f = c.function("attention_split", "attention_split_q8");
    const int n_kv = n_head / group;
    AttentionSplitShape sh = attention_split_shape(n_kv, group, hd);
    // 4-byte copies of a row's scales: rows of a multiple of 64 values (a model's n_kv x hd always is)
    const int per_sm = kv_row % 64 == 0 ? split_blocks_per_sm(c, f, sh) : 0;
    if (per_sm > 0) {
      // One wave: the groups of KV heads times the splits fill the SMs; a slot a split (at most one a chunk).
      const int head_blocks = n_kv / sh.heads;
      int splits = std::clamp(per_sm * c.info().sms / head_blocks, 1, max_chunks);
      void* p1[] = {&q, &k8, &kd, &v8, &vd, &pos, &hd, &group, &kv_row, &scale, &max_chunks, &sh.heads, &sh.ways, &sh.rows, &ml, &o};
      launch_overlapped(c, f, static_cast<unsigned>(head_blocks), static_cast<unsigned>(splits), static_cast<unsigned>(sh.threads), 1, p1,
                        sh.shared_bytes);
      void* p2[] = {&o, &ml, &pos, &hd, &max_chunks, &splits, &sh.rows, &out};
      launch_overlapped(c, c.function("attention_split", "attention_combine_splits"), heads, 1, 256, 1, p2);
      return;
    }
    if (passes == Q8Passes::Split)
      throw InvalidArgument(strcat("cuda split attention over the 8-bit KV copy: ", group, " q heads a KV head, rows of ", kv_row,
                                   " values, a ring of ", sh.shared_bytes, " bytes of shared memory for head size ", hd,
                                   ": does not fit on ", c.info().name, " (takes groups of up to 16 and rows of a multiple of 64)"));
  }
  if (passes == Q8Passes::One || (passes == Q8Passes::Default && kOnePassQ8)) {  // Note [One pass over the 8-bit copy]
    void* p1[] = {&q, &k8, &kd, &v8, &vd, &pos, &hd, &group, &kv_row, &scale, &max_chunks, &ml, &o};
    launch_overlapped(c, fn(c, "attention_one_pass_q8"), heads, q8_blocks, 256, 1, p1);
    void* p2[] = {&o, &ml, &pos, &hd, &max_chunks, &out};
    launch_overlapped(c, fn(c, "attention_combine_rescaled"), heads, 1, 256, 1, p2);
    return;
  }
  void* p1[] = {&q, &k8, &kd, &pos, &hd, &group, &kv_row, &scale, &n_ctx, &max_chunks, &s, &ml};
  launch_overlapped(c, fn(c, "attention_scores_q8"), heads, q8_blocks, 256, 1, p1);
  void* p2[] = {&v8, &vd, &pos, &hd, &group, &kv_row, &n_ctx, &max_chunks, &s, &ml, &o};
  launch_overlapped(c, fn(c, "attention_weights_v_q8"), heads, q8_blocks, 256, 1, p2);
  int block_positions = 256;  // kQ8Keys
  void* p3[] = {&o, &pos, &hd, &max_chunks, &block_positions, &out};
  launch_overlapped(c, fn(c, "attention_combine_wide"), heads, 1, 256, 1, p3);
}

void rmsnorm_quantize(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr xn, Q8Activations& xq) {
  const api::CUfunction f = c.function("fused_ops", "rmsnorm_quantize");
  int n = static_cast<int>(xq.n);
  api::CUdeviceptr q = xq.q.ptr(), d = xq.d.ptr(), bs = xq.bsums.ptr();
  void* params[] = {&x, &w, &eps, &xn, &n, &q, &d, &bs};
  launch_overlapped(c, f, static_cast<unsigned>(xq.n / 256), 1, 256, 1, params);
}

void swiglu_quantize(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, Q8Activations& gq) {
  const api::CUfunction f = c.function("fused_ops", "swiglu_quantize");
  api::CUdeviceptr q = gq.q.ptr(), d = gq.d.ptr(), bs = gq.bsums.ptr();
  void* params[] = {&g, &u, &q, &d, &bs};
  launch_overlapped(c, f, static_cast<unsigned>(gq.n / 256), 1, 256, 1, params);
}

void rope_append(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int n_head, int n_kv, api::CUdeviceptr pos,
                 const RopeParams& p, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache) {
  const api::CUfunction f = c.function("fused_ops", "rope_append");
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0;
  float ts = p.theta_scale;
  api::CUdeviceptr freqs = p.freqs;
  void* params[] = {&q, &k, &v, &n_head, &n_kv, &hd, &rd, &pos, &ts, &freqs, &neox, &k_cache, &v_cache};
  const std::size_t threads = static_cast<std::size_t>(n_head + n_kv) * (rd / 2) + static_cast<std::size_t>(n_kv) * hd;
  launch_overlapped(c, f, blocks(threads, 128), 1, 128, 1, params);
}

// A tuning knob: TRUENO_ROPE_ATTENTION=0 keeps rope_append and the one-block attention apart, for comparison.
const bool kRopeInAttention = tuning_define("TRUENO_ROPE_ATTENTION", 1) != 0;

bool rope_attention_fusable(const AttentionScratch& a, int positions, int hd, int rope_dim) {
  return kRopeInAttention && attention_one_block(a, positions) && (hd == 64 || hd == 128) && rope_dim <= hd;
}

void rope_attention_one_block(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int n_head, int n_kv, api::CUdeviceptr pos,
                              const RopeParams& p, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                              const AttentionScratch& a, int positions) {
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0, group = n_kv > 0 ? n_head / n_kv : 0, kv_row = n_kv * hd;
  if (positions < 0 || positions > a.n_ctx || !rope_attention_fusable(a, positions, hd, rd) || n_kv < 1 || n_head % n_kv != 0 ||
      k_cache % 16 != 0 || v_cache % 16 != 0)
    throw InvalidArgument(strcat("cuda rope + attention in one launch: ", n_head, "/", n_kv, " heads of ", hd, " (rope over ", rd,
                                 "), ", positions, " positions of a scratch of ", a.n_ctx,
                                 " (takes heads of 64 or 128, at most 256 positions, 16-byte aligned caches)"));
  float ts = p.theta_scale, scale = 1.0f / std::sqrt(static_cast<float>(hd));
  api::CUdeviceptr freqs = p.freqs;
  void* params[] = {&q, &k, &v, &hd, &rd, &pos, &ts, &freqs, &neox, &group, &kv_row, &scale, &k_cache, &v_cache, &out};
  launch_overlapped(c, fn(c, "rope_attention_one_block"), static_cast<unsigned>(n_head), 1, 256, 1, params);
}

void swiglu(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, std::size_t n) {
  if (n % 4 == 0 && g % 16 == 0 && u % 16 == 0 && n / 4 <= static_cast<std::size_t>(INT_MAX)) {  // the same bits, 4 per thread
    const api::CUfunction f = fn(c, "swiglu_v4");
    int n4 = static_cast<int>(n / 4);
    void* params[] = {&g, &u, &n4};
    launch_overlapped(c, f, blocks(n / 4, 256), 1, 256, 1, params);
    return;
  }
  const api::CUfunction f = fn(c, "swiglu");
  int nn = static_cast<int>(n);
  void* params[] = {&g, &u, &nn};
  launch_overlapped(c, f, blocks(n, 256), 1, 256, 1, params);
}

void add_inplace(Context& c, api::CUdeviceptr x, api::CUdeviceptr y, std::size_t n) {
  const api::CUfunction f = fn(c, "add_inplace");
  int nn = static_cast<int>(n);
  void* params[] = {&x, &y, &nn};
  launch_overlapped(c, f, blocks(n, 256), 1, 256, 1, params);
}

}  // namespace trueno::cuda
