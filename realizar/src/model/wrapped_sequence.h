// A sequence that runs on an inner one and remembers every token fed to it: the base of the wrappers
// (the finite-logits check, recorder.cpp; the CPU fallback, parity.cpp), which replay that history.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "realizar/model.h"

namespace realizar {

class WrappedSequence : public Sequence {
 public:
  explicit WrappedSequence(std::unique_ptr<Sequence> inner) : s_(std::move(inner)) {}
  std::size_t n_ctx() const override { return s_->n_ctx(); }
  std::size_t pos() const override { return s_->pos(); }
  void reset() override {
    s_->reset();
    history_.clear();
  }
  std::size_t kv_bytes() const override { return s_->kv_bytes(); }
  std::span<const float> logits() const override { return s_->logits(); }
  std::int32_t sample(Sampler& s, std::span<const std::int32_t> history) override { return s_->sample(s, history); }
  bool logits_finite() const override { return s_->logits_finite(); }
  std::string backend_name() const override { return s_->backend_name(); }
  void set_recorder(Recorder* r) override { s_->set_recorder(r); }

 protected:
  std::unique_ptr<Sequence> s_;
  std::vector<std::int32_t> history_;  // every token fed at positions [0, pos())
};

}  // namespace realizar
