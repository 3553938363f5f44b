// Launchers for kernels/batch_ops.cu (ops/batch.h).
#include "trueno/cuda/ops/batch.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace trueno::cuda {
namespace {

constexpr int kChunk = 64;  // as in kernels/attention.cuh

api::CUfunction fn(Context& c, const char* name) { return c.function("batch_ops", name); }

}  // namespace

BatchAttentionScratch::BatchAttentionScratch(Context& c, int max_batch_, int max_ctx_, int n_head, int hd)
    : max_batch(max_batch_),
      max_ctx(max_ctx_),
      n_chunks((max_ctx_ + kChunk - 1) / kChunk),
      scores(c, static_cast<std::size_t>(max_batch_) * n_head * max_ctx_ * 4),
      max_sum(c, static_cast<std::size_t>(max_batch_) * n_head * n_chunks * 2 * 4),
      partial(c, static_cast<std::size_t>(max_batch_) * n_head * n_chunks * hd * 4) {
  if (max_batch_ < 1 || max_ctx_ < 1 || max_ctx_ > kMaxAttentionPositions)
    throw InvalidArgument(strcat("cuda batched attention: ", max_batch_, " sequences of ", max_ctx_, " positions (at most ",
                                 kMaxAttentionPositions, ")"));
  if (hd < 1 || hd > 256) throw InvalidArgument(strcat("cuda batched attention: head size ", hd, " is outside [1, 256]"));
}

void rope_append_batched(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int batch, api::CUdeviceptr rows,
                         int layer, int n_head, int n_kv, const RopeParams& p) {
  if (batch <= 0) return;
  const api::CUfunction f = fn(c, "rope_append_batched");
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0;
  float ts = p.theta_scale;
  api::CUdeviceptr freqs = p.freqs;
  void* params[] = {&q, &k, &v, &rows, &layer, &n_head, &n_kv, &hd, &rd, &ts, &freqs, &neox};
  const std::size_t threads = static_cast<std::size_t>(n_head + n_kv) * (rd / 2) + static_cast<std::size_t>(n_kv) * hd;
  launch(c, f, static_cast<unsigned>((threads + 127) / 128), static_cast<unsigned>(batch), 128, 1, params);
}

void attention_decode_batched(Context& c, api::CUdeviceptr q, api::CUdeviceptr out, int batch, api::CUdeviceptr rows, int layer,
                              BatchAttentionScratch& a, int n_head, int hd, int group, int kv_row, int positions) {
  if (batch <= 0) return;
  if (batch > a.max_batch || positions < 1 || positions > a.max_ctx)
    throw InvalidArgument(strcat("cuda batched attention: ", batch, " sequences, ", positions, " positions exceed the scratch's ",
                                 a.max_batch, " and ", a.max_ctx));
  float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  int max_ctx = a.max_ctx, chunks = (positions + kChunk - 1) / kChunk;
  api::CUdeviceptr s = a.scores.ptr(), ml = a.max_sum.ptr(), o = a.partial.ptr();
  void* p1[] = {&q, &rows, &layer, &n_head, &hd, &group, &kv_row, &scale, &max_ctx, &s, &ml};
  check(c.driver().launch_kernel(fn(c, "attention_scores_batched"), n_head, chunks, batch, 256, 1, 1, 0, c.stream(), p1, nullptr),
        "cuLaunchKernel(attention_scores_batched)");
  void* p2[] = {&rows, &layer, &n_head, &hd, &group, &kv_row, &max_ctx, &s, &ml, &o};
  check(c.driver().launch_kernel(fn(c, "attention_weights_v_batched"), n_head, chunks, batch, 256, 1, 1, 0, c.stream(), p2, nullptr),
        "cuLaunchKernel(attention_weights_v_batched)");
  void* p3[] = {&o, &rows, &n_head, &hd, &chunks, &out};
  check(c.driver().launch_kernel(fn(c, "attention_combine_batched"), n_head, 1, batch, std::min(hd, 256), 1, 1, 0, c.stream(), p3, nullptr),
        "cuLaunchKernel(attention_combine_batched)");
}

}  // namespace trueno::cuda
