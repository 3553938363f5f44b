// Prompt chunks of several CUDA sequences in one pass (Batch::prefill).
//
// Note [Joint prefill]
// A prompt pass reads every weight once whatever its length (Note [Batched prefill]): 64 prompts of 130
// tokens prefilled one by one read a 7B model's weights 64 times, and without resident f16 copies
// dequantize them 64 times (Note [Resident f16 weights]). Here the chunks of several sequences are rows of
// one pass: the norms, products and SwiGLU run once over all of them; rope + KV append and attention run
// per sequence over its own rows, position and cache (the single prompt's kernels on row ranges); the LM
// head runs on each sequence's last row only, and those rows' logits come back to the host (as the
// batched step's do). The arithmetic per row is a prompt pass's, but a GEMM over more rows may round
// differently, so a sequence's logits match its own prompt pass to rounding, not bit for bit
// (CudaGpuForward.JointPrefillAgreesWithSeparatePrompts). Up to kMaxJointTokens rows per pass; a
// recording sequence, a single chunk, or a chunk longer than its own prompt chunk take the sequences'
// own forwards.
#include <algorithm>

#include "backends/cuda/cuda_sequence.h"
#include "model/step_checks.h"
#include "trueno/cuda/ops/gemm.h"
#include "trueno/cuda/ops/prefill.h"
#include "trueno/quant.h"

namespace realizar::cuda_forward {

void CudaBatch::prefill(std::span<Sequence* const> seqs, std::span<const std::span<const std::int32_t>> chunks) {
  const Config& c = w_->model().config();
  const auto s = checked_prefill<CudaSequence>(c, seqs, chunks, [&](const CudaSequence& q) { return q.w_ == w_; }, "these CUDA weights");
  bool joint = s.size() > 1 && w_->options.prefill != CudaOptions::Prefill::TokenByToken && s[0]->prefill_supported();
  for (std::size_t i = 0; i < s.size() && joint; ++i)
    joint = s[i]->recorder_ == nullptr && chunks[i].size() <= std::min(kMaxJointTokens, s[i]->prefill_chunk(false));
  if (!joint) {
    for (std::size_t i = 0; i < s.size(); ++i) s[i]->forward(chunks[i], false);
    return;
  }
  // Passes of whole chunks, up to kMaxJointTokens rows each.
  for (std::size_t from = 0; from < s.size();) {
    std::size_t to = from, rows = 0;
    while (to < s.size() && (to == from || rows + chunks[to].size() <= kMaxJointTokens)) rows += chunks[to++].size();
    if (to - from == 1) s[from]->forward(chunks[from], false);
    else joint_pass(std::span(s).subspan(from, to - from), chunks.subspan(from, to - from));
    from = to;
  }
}

void CudaBatch::joint_pass(std::span<CudaSequence* const> s, std::span<const std::span<const std::int32_t>> chunks) {
  const Config& c = w_->model().config();
  const std::size_t B = s.size(), d = c.n_embd, V = c.n_vocab, qd = std::size_t{c.n_head} * c.head_dim;
  const std::size_t kv_row = std::size_t{c.n_head_kv} * c.head_dim;
  std::vector<std::size_t> first(B + 1, 0);  // sequence i's rows: [first[i], first[i + 1])
  for (std::size_t i = 0; i < B; ++i) first[i + 1] = first[i] + chunks[i].size();
  const std::size_t T = first[B];
  ctx_.make_current();
  reserve_products(*w_, T, /*all_logits=*/false, pre_);
  reserve_products(*w_, B, /*all_logits=*/true, pre_);  // one logits row per sequence
  ctx_.synchronize();  // earlier copies have read the staging buffer
  const Matrix& e = w_->model().token_embd;
  const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols);
  auto* emb = static_cast<float*>(pre_.staging.data());
  for (std::size_t i = 0; i < B; ++i)
    for (std::size_t t = 0; t < chunks[i].size(); ++t)
      trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan(static_cast<std::size_t>(chunks[i][t]) * rb, rb), e.cols),
                         std::span(emb + (first[i] + t) * d, d));
  const cu::Driver& drv = ctx_.driver();
  cu::check(drv.memcpy_htod_async(pre_.x.ptr(), emb, T * d * 4, ctx_.stream()), "cuMemcpyHtoDAsync(joint prefill embeddings)");

  const int n_head = static_cast<int>(c.n_head), n_kv = static_cast<int>(c.n_head_kv), hd = static_cast<int>(c.head_dim);
  const int group = n_head / n_kv;
  F16Staging::Pass operands(w_->staging());
  for (std::size_t l = 0; l < c.n_layer; ++l) {
    const DeviceLayer& w = w_->layers[l];
    operands.enter(l);
    cu::rmsnorm(ctx_, pre_.x.ptr(), w.attn_norm.ptr(), c.rms_eps, pre_.xn.ptr(), T, d);
    gemm_products(ctx_, {{&w.wq, pre_.q.ptr()}, {&w.wk, pre_.k.ptr()}, {&w.wv, pre_.v.ptr()}}, pre_.xn.ptr(), T, false, pre_, operands);
    if (w.bq.bytes() != 0) cu::add_rows(ctx_, pre_.q.ptr(), w.bq.ptr(), T, w.bq.bytes() / 4);
    if (w.bk.bytes() != 0) cu::add_rows(ctx_, pre_.k.ptr(), w.bk.ptr(), T, w.bk.bytes() / 4);
    if (w.bv.bytes() != 0) cu::add_rows(ctx_, pre_.v.ptr(), w.bv.ptr(), T, w.bv.bytes() / 4);
    for (std::size_t i = 0; i < B; ++i) {  // each sequence's rows at its positions, in its cache
      const std::size_t n = chunks[i].size(), r = first[i];
      const std::size_t layer_off = l * s[i]->n_ctx_ * kv_row * sizeof(std::uint16_t);
      const cu::api::CUdeviceptr kc = s[i]->k_cache_.ptr() + layer_off, vc = s[i]->v_cache_.ptr() + layer_off;
      const int pos0 = static_cast<int>(s[i]->pos_);
      cu::rope_append_rows(ctx_, pre_.q.ptr() + r * qd * 4, pre_.k.ptr() + r * kv_row * 4, pre_.v.ptr() + r * kv_row * 4, n, n_head, n_kv,
                           pos0, w_->rope, pre_.q16.ptr() + r * qd * 2, kc, vc);
      cu::attention_prefill(ctx_, pre_.q16.ptr() + r * qd * 2, kc, vc, pre_.att.ptr() + r * qd * 4, n, pos0, pre_.attention, n_head, hd,
                            group, static_cast<int>(kv_row));
    }
    gemm_products(ctx_, {{&w.wo, pre_.x.ptr()}}, pre_.att.ptr(), T, /*accumulate=*/true, pre_, operands);  // x += Wo att
    cu::rmsnorm(ctx_, pre_.x.ptr(), w.ffn_norm.ptr(), c.rms_eps, pre_.xn.ptr(), T, d);
    gemm_products(ctx_, {{&w.gate, pre_.gate.ptr()}, {&w.up, pre_.up.ptr()}}, pre_.xn.ptr(), T, false, pre_, operands);
    cu::swiglu(ctx_, pre_.gate.ptr(), pre_.up.ptr(), T * c.n_ff);
    gemm_products(ctx_, {{&w.down, pre_.x.ptr()}}, pre_.gate.ptr(), T, /*accumulate=*/true, pre_, operands);
  }
  // The LM head on each sequence's last row: row i of xn is sequence i's normed last row.
  for (std::size_t i = 0; i < B; ++i)
    cu::rmsnorm(ctx_, pre_.x.ptr() + (first[i + 1] - 1) * d * 4, w_->output_norm.ptr(), c.rms_eps, pre_.xn.ptr() + i * d * 4, 1, d);
  gemm_products(ctx_, {{&w_->output, pre_.logits.ptr()}}, pre_.xn.ptr(), B, false, pre_, operands);
  ctx_.synchronize();
  logits_.resize(B * V);
  pre_.logits.download(logits_.data(), B * V * 4);
  for (std::size_t i = 0; i < B; ++i) {
    s[i]->logits_.assign(logits_.begin() + i * V, logits_.begin() + (i + 1) * V);
    s[i]->device_row_ = s[i]->host_stale_ = false;  // host logits: sample() takes the host path
    s[i]->pos_ += chunks[i].size();
  }
}

}  // namespace realizar::cuda_forward
