// Named intermediates (recorder.h) and the finite check built on them.
//
// Note [Intermediates]
// Final logits say that a backend is wrong, not where. With a Recorder set, a forward call reports the
// last token's named tensors (token_embd, per layer kLayerTensors, output_norm, logits) in the order it
// computes them. Only the last token: it sees every earlier position through the KV cache, and one row
// per tensor keeps a 7B trace at a few MB. The CPU Session taps its buffers as it goes (the arithmetic is
// unchanged). The CUDA sequence, while recording, sends every token of a call through the decode step
// (no prompt batch) and runs the last one eagerly rather than as a graph, downloading each buffer after
// the launch that wrote it; its o and down products accumulate into the residual, so its ffn_out is
// l_out - ffn_inp computed on the host. A trace therefore covers the decode kernels, not the batched
// prompt path (cuBLAS), whose faults the gate's logits comparison still catches.
#include "realizar/recorder.h"

#include <cmath>

#include "model/wrapped_sequence.h"
#include "util/strcat.h"

namespace realizar {

std::string tensor_label(int layer, std::string_view tensor) {
  return layer == kNoLayer ? std::string(tensor) : strcat("layer ", layer, " ", tensor);
}

std::string tensor_inputs(int layer, std::string_view t) {
  const std::string b = strcat("blk.", layer, ".");
  if (t == "token_embd") return "token_embd.weight";
  if (t == "output_norm") return "output_norm.weight and rms_eps";
  if (t == "logits") return "output.weight (token_embd.weight when tied)";
  if (t == "attn_norm" || t == "ffn_norm") return strcat(b, t, ".weight and rms_eps");
  if (t == "q" || t == "k" || t == "v") return strcat(b, "attn_", t, ".weight (and its bias)");
  if (t == "q_rope" || t == "k_rope") return "the rope angles (rope.freq_base, rope_freqs.weight)";
  if (t == "attn_out") return "the KV cache (this and earlier positions' k_rope and v)";
  if (t == "ffn_inp") return strcat(b, "attn_output.weight");
  if (t == "ffn_act") return strcat(b, "ffn_gate.weight and ", b, "ffn_up.weight");
  if (t == "ffn_out") return strcat(b, "ffn_down.weight");
  if (t == "l_out") return "the residual sum";
  return "?";
}

void Recording::record(int layer, std::string_view tensor, std::span<const float> values) {
  tensors_.push_back({layer, std::string(tensor), std::vector<float>(values.begin(), values.end())});
}

const Recording::Tensor* Recording::find(int layer, std::string_view name) const {
  for (const Tensor& t : tensors_)
    if (t.layer == layer && t.name == name) return &t;
  return nullptr;
}

bool all_finite(std::span<const float> values) {
  for (const float v : values)
    if (!std::isfinite(v)) return false;
  return true;
}

void throw_non_finite(Sequence& s, std::span<const std::int32_t> tokens, const std::string& what) {
  Recording rec;
  struct Unset {
    Sequence& s;
    ~Unset() { s.set_recorder(nullptr); }
  } unset{s};
  s.reset();
  s.set_recorder(&rec);
  s.forward(tokens, false);
  for (const Recording::Tensor& t : rec.tensors()) {
    if (all_finite(t.values)) continue;
    std::size_t bad = 0;
    for (const float v : t.values) bad += !std::isfinite(v);
    throw NonFiniteError(strcat(what, " (backend ", s.backend_name(), "): the first non-finite intermediate is ",
                                tensor_label(t.layer, t.name), " (", bad, " of ", t.values.size(),
                                " values NaN or infinite; computed from ", tensor_inputs(t.layer, t.name),
                                "); every tensor before it is finite"));
  }
  throw NonFiniteError(strcat(what, " (backend ", s.backend_name(), "): a recorded re-run of the ", tokens.size(),
                              " tokens found every intermediate finite (a fault that did not repeat)"));
}

namespace {

class FiniteCheck final : public WrappedSequence {
 public:
  using WrappedSequence::WrappedSequence;
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override {
    const std::size_t p0 = history_.size(), T = tokens.size();
    s_->forward(tokens, all_logits);
    history_.insert(history_.end(), tokens.begin(), tokens.end());
    if (!all_logits) {  // one row, checked where it is (a device sequence need not copy it back)
      if (!s_->logits_finite()) fail_at(p0 + T - 1);
      return;
    }
    const std::span<const float> lg = s_->logits();
    const std::size_t V = lg.size() / T;
    for (std::size_t r = 0; r < T; ++r)
      if (!all_finite(lg.subspan(r * V, V))) fail_at(p0 + r);
  }

 private:
  // The replay ends at the first non-finite position, so its last token is the one traced.
  [[noreturn]] void fail_at(std::size_t at) {
    throw_non_finite(*s_, std::span(history_).first(at + 1), strcat("non-finite logits at position ", at));
  }
};

}  // namespace

std::unique_ptr<Sequence> with_finite_check(std::unique_ptr<Sequence> inner) {
  return std::make_unique<FiniteCheck>(std::move(inner));
}

}  // namespace realizar
