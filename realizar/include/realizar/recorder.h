// Named intermediates of a forward pass (Note [Intermediates], realizar/src/model/recorder.cpp): a
// Sequence given a Recorder reports, for the last token of each forward call, every named tensor in the
// order it computes them. The parity gate uses them to name the first layer and tensor where a backend
// departs from the CPU; the finite check uses them to name where a NaN or infinity first appears.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "realizar/model.h"
#include "trueno/error.h"

namespace realizar {

// The layer of the tensors outside the blocks: token_embd (first), output_norm and logits (last).
inline constexpr int kNoLayer = -1;

// Per layer, in order: attn_norm, q, k, v (products and biases), q_rope, k_rope, attn_out (before Wo),
// ffn_inp (the residual after attention), ffn_norm, ffn_act (silu(gate) * up), ffn_out (Wdown ffn_act),
// l_out (the residual after the block).
inline constexpr std::string_view kLayerTensors[] = {"attn_norm", "q",       "k",        "v",       "q_rope",  "k_rope",
                                                    "attn_out",  "ffn_inp", "ffn_norm", "ffn_act", "ffn_out", "l_out"};

class Recorder {
 public:
  virtual ~Recorder() = default;
  // One tensor of the last token of a forward call; values are valid only during the call.
  virtual void record(int layer, std::string_view tensor, std::span<const float> values) = 0;
};

// "layer 2 ffn_out", or "logits" for the tensors outside the blocks.
std::string tensor_label(int layer, std::string_view tensor);
// The weights and metadata a tensor is computed from ("blk.2.ffn_down.weight"), for error messages.
std::string tensor_inputs(int layer, std::string_view tensor);

// Keeps what it is given, in order.
class Recording final : public Recorder {
 public:
  struct Tensor {
    int layer;
    std::string name;
    std::vector<float> values;
  };
  void record(int layer, std::string_view tensor, std::span<const float> values) override;
  void clear() { tensors_.clear(); }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const Tensor* find(int layer, std::string_view name) const;

 private:
  std::vector<Tensor> tensors_;
};

// Non-finite numbers in a forward pass, naming where they first appeared.
class NonFiniteError : public trueno::Error {
 public:
  using Error::Error;
};

// Whether every value is finite.
bool all_finite(std::span<const float> values);

// Runs tokens on s from position 0 (s is reset first) with a recorder, as one forward call, and throws
// NonFiniteError naming the first recorded tensor with a non-finite value, its count and the weights it
// reads; `what` opens the message ("non-finite logits at position 7"). When every tensor is finite (a
// fault that did not repeat) the error says so. Leaves s holding those tokens and no recorder.
[[noreturn]] void throw_non_finite(Sequence& s, std::span<const std::int32_t> tokens, const std::string& what);

// A sequence that checks every forward call's logits and, at the first non-finite one, replays the
// tokens fed so far with a recorder and throws NonFiniteError (throw_non_finite): generation stops with
// the layer and tensor named instead of sampling from NaNs.
std::unique_ptr<Sequence> with_finite_check(std::unique_ptr<Sequence> inner);

}  // namespace realizar
