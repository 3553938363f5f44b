// realizar's Vulkan backend: a model's weights on one Vulkan device (uploaded once, in the file's types,
// shared read-only by every sequence on them) and a sequence's own state (per-layer KV caches,
// activations, recorded decode steps), used by its decode step (forward_vulkan.cpp).
#pragma once
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "realizar/model.h"
#include "trueno/device.h"
#include "trueno/vulkan/context.h"
#include "trueno/vulkan/ops.h"

namespace realizar::vulkan_forward {

namespace vk = trueno::vulkan;

// A matrix in the file's type, in slices of whole rows that each fit one storage buffer (Note [Split
// matrices], forward_vulkan.cpp).
struct DeviceMatrix {
  trueno::QuantType type = trueno::QuantType::F32;
  std::size_t rows = 0, cols = 0;
  struct Part {
    vk::Buffer data;
    std::size_t row0 = 0, rows = 0;
  };
  std::vector<Part> parts;
};

struct DeviceLayer {
  vk::Buffer attn_norm, ffn_norm, bq, bk, bv;  // the biases are empty buffers when the model has none
  DeviceMatrix wq, wk, wv, wo, gate, up, down;
};

class VulkanWeights final : public DeviceWeights, public std::enable_shared_from_this<VulkanWeights> {
 public:
  VulkanWeights(const Model& m, const trueno::Device& device);
  std::unique_ptr<Sequence> new_sequence(std::size_t n_ctx) const override;
  std::unique_ptr<Batch> new_batch() const override;
  std::string backend_name() const override;
  const Model& model() const { return m_; }

  const Model& m_;
  std::shared_ptr<vk::Context> ctx;
  std::vector<DeviceLayer> layers;
  DeviceMatrix output;
  vk::Buffer output_norm, rope_freqs;
  float theta_scale = 0.0f;
  std::size_t most_split_rows = 0;  // the most rows of a split matrix (0: none is split)
  std::size_t largest_part_rows = 0;
  bool gemm_ok = true;  // every matrix can go through vk::gemm (prompts in long chunks)
};

class VulkanSequence final : public Sequence {
 public:
  VulkanSequence(std::shared_ptr<const VulkanWeights> weights, std::size_t n_ctx);
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override { pos_ = 0; }
  std::size_t kv_bytes() const override;
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override;
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override { return w_->backend_name(); }
  void set_recorder(Recorder* r) override { recorder_ = r; }

 private:
  friend class VulkanBatch;
  std::shared_ptr<const VulkanWeights> w_;
  const Model& m_;
  const Config& c_;
  vk::Context& ctx_;
  static constexpr std::size_t kMaxPrefillRows = 512;  // tokens per prompt chunk (GEMM products)
  static constexpr std::size_t kAttentionRows = 8;     // query rows per attention dispatch (its scratch)
  enum class Logits { None, Last, All };
  std::size_t n_ctx_, pos_ = 0, kv_row_, rows_, logits_offset_;
  std::vector<vk::Buffer> k_cache_, v_cache_;  // per layer: [n_ctx][kv_row] f16
  vk::Buffer x_, xn_, q_, k_, v_, att_, gate_, up_, logits_dev_, pos_dev_, part_y_, split_y_, x_last_;  // [rows_][.]
  vk::Buffer io_;  // host-visible: the embedding rows and the position in, the logits out
  vk::AttentionScratch attention_;
  std::vector<float> logits_;
  // Note [Vulkan decode recording]: (rows, logits, position bucket) -> the recorded step.
  std::map<std::tuple<std::size_t, int, std::size_t>, std::unique_ptr<vk::Recorder>> steps_;
  Recorder* recorder_ = nullptr;
  bool tapping_ = false;  // this step runs eagerly and taps its buffers (Note [Intermediates])
  std::vector<float> tapped_, ffn_inp_;

  std::size_t bucket_for(std::size_t pos) const;
  // y (+)= W x for T activation rows, through the matrix's parts.
  void linear(vk::Recorder& r, const DeviceMatrix& w, const vk::Buffer& x, vk::Buffer& y, std::size_t T, bool accumulate = false);
  void record(vk::Recorder& r, std::size_t T, Logits logits, std::size_t bucket);
  template <class F>
  void concurrent(vk::Recorder& r, F&& f);
  void tap(vk::Recorder& r, int layer, std::string_view tensor, const vk::Buffer& b, std::size_t n);
  // tokens (at most rows_) at positions pos_.., logits into logits_out as `logits` says.
  void run_rows(std::span<const std::int32_t> tokens, Logits logits, float* logits_out);
};

// Steps each sequence in turn (the products are not yet shared across sequences on Vulkan).
class VulkanBatch final : public Batch {
 public:
  explicit VulkanBatch(std::shared_ptr<const VulkanWeights> weights) : w_(std::move(weights)) {}
  void step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) override;

 private:
  std::shared_ptr<const VulkanWeights> w_;
};

}  // namespace realizar::vulkan_forward
