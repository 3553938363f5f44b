// The CUDA sequence's token pick (Sequence::sample) on the device, where its logits are.
//
// Note [Sampling on the device]
// A decode step used to copy its logits to the host (n_vocab floats: 128 KB for a 32K vocabulary, 600 KB
// for Qwen2's 152K) to be ranked there. Now a forward without all_logits leaves its row in logits_dev_:
// the step (decode graph or prefill) ends with the argmax kernels over it (ops/sample.h) and copies back
// their 8 bytes, the CPU greedy's pick and whether every logit is finite (the finite check's answer,
// recorder.cpp). logits() copies the row on first use (the parity gate, `realizar logits`, logprobs,
// presence penalties). sample() then:
//   greedy, no penalty in effect:  the step's argmax; nothing more is copied;
//   greedy with a penalty:         the penalty on a device copy of the row (logits() still returns the
//                                  logits as computed), argmax, 8 bytes back;
//   a temperature alone:           (the penalty,) the whole draw on the device (cu::temperature_draw,
//                                  Note [Temperature alone] in sampler.cpp), 4 bytes back;
//   temperature > 0, a filter:     (the penalty,) the best candidates(n_vocab) - top_k - on the device
//                                  (Note [Device top-k], src/cuda/ops/sample.cpp), 8 bytes each back;
//                                  the host finishes with Sampler::draw (temperature, top-p, min-p, the
//                                  sampler's generator).
// Every device step computes what the CPU sampler computes (the same f32 penalty, the same ranking), so
// the token equals Sampler::sample's on the same logits and seed. The host path (logits(), then
// Sampler::sample) remains when every logit is a candidate under top-p or min-p and there are more than
// kMaxTopK (1024) of them (top_k 0 or above 1024), when a logit is not finite under temperature > 0 (Note [Greedy ties and NaN],
// sampler.cpp), and when the logits are on the host only: a forward with all_logits, or CudaBatch's GEMM
// step, which copies every row of the batch back.
#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_sequence.h"
#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar::cuda_forward {

std::int32_t CudaSequence::sample(Sampler& s, std::span<const std::int32_t> history) {
  const std::size_t V = c_.n_vocab, k = s.candidates(V);
  // A temperature alone, finite logits: the whole draw on the device, 4 bytes back (Note [Temperature alone]).
  if (device_row_ && s.temperature_alone(V) && scan_.non_finite == 0) return draw_on_device(s, history);
  if (!device_row_ || (!s.greedy() && k > static_cast<std::size_t>(cu::kMaxTopK))) return Sequence::sample(s, history);
  const std::vector<std::int32_t> ids = s.penalized(history, V);
  if (s.greedy() && ids.empty()) return scan_.index;
  ctx_.make_current();
  const cu::api::CUdeviceptr x = ids.empty() ? logits_dev_.ptr() : penalized_logits(ids, s.options().repeat_penalty);
  auto* picked = static_cast<std::byte*>(readback_.data()) + sizeof(cu::ArgmaxResult);
  const cu::Driver& drv = ctx_.driver();
  if (s.greedy()) {
    cu::argmax(ctx_, x, V, *sample_, picked_dev_.ptr());
    cu::check(drv.memcpy_dtoh_async(picked, picked_dev_.ptr(), sizeof(cu::ArgmaxResult), ctx_.stream()), "cuMemcpyDtoHAsync(argmax)");
    ctx_.synchronize();
    cu::ArgmaxResult r;
    std::memcpy(&r, picked, sizeof r);
    return r.index;
  }
  const int n = static_cast<int>(k);
  cu::top_k(ctx_, x, V, n, *sample_, picked_dev_.ptr());
  cu::check(drv.memcpy_dtoh_async(picked, picked_dev_.ptr(), cu::top_k_bytes(n), ctx_.stream()), "cuMemcpyDtoHAsync(top_k)");
  ctx_.synchronize();
  cu::TopKHeader head;
  std::memcpy(&head, picked, sizeof head);
  if (head.any_nan != 0) return Sequence::sample(s, history);  // the CPU's sort decides where NaNs go
  best_.resize(k);
  const std::byte* at = picked + sizeof(cu::TopKHeader);
  for (std::size_t i = 0; i < k; ++i, at += sizeof(cu::TopKCandidate)) {
    cu::TopKCandidate c;
    std::memcpy(&c, at, sizeof c);
    best_[i] = {c.logit, c.id};
  }
  return s.draw(best_);
}

std::int32_t CudaSequence::draw_on_device(Sampler& s, std::span<const std::int32_t> history) {
  const std::size_t V = c_.n_vocab;
  const std::vector<std::int32_t> ids = s.penalized(history, V);
  ctx_.make_current();
  const cu::api::CUdeviceptr x = ids.empty() ? logits_dev_.ptr() : penalized_logits(ids, s.options().repeat_penalty);
  cu::temperature_draw(ctx_, x, V, s.inverse_temperature(), s.next_uniform(), *sample_, picked_dev_.ptr());
  auto* picked = static_cast<std::byte*>(readback_.data()) + sizeof(cu::ArgmaxResult);
  cu::check(ctx_.driver().memcpy_dtoh_async(picked, picked_dev_.ptr(), sizeof(std::int32_t), ctx_.stream()), "cuMemcpyDtoHAsync(draw)");
  ctx_.synchronize();
  std::int32_t id;
  std::memcpy(&id, picked, sizeof id);
  if (id < 0 || static_cast<std::size_t>(id) >= V)  // the step's scan said every logit is finite
    throw trueno::Error(strcat("cuda: the temperature draw returned ", id, " over logits the step found finite"));
  return id;
}

cu::api::CUdeviceptr CudaSequence::penalized_logits(const std::vector<std::int32_t>& ids, float penalty) {
  const std::size_t V = c_.n_vocab, bytes = ids.size() * sizeof(std::int32_t);
  if (penalized_.bytes() == 0) penalized_ = cu::DeviceBuffer(ctx_, V * sizeof(float));
  if (ids_dev_.bytes() < bytes) {
    const std::size_t grown = std::max<std::size_t>(bytes, 256 * sizeof(std::int32_t));
    ids_dev_ = cu::DeviceBuffer(), ids_dev_ = cu::DeviceBuffer(ctx_, grown);
    ids_host_ = cu::PinnedBuffer(ctx_, grown);
  }
  std::memcpy(ids_host_.data(), ids.data(), bytes);  // the last sample() waited for its copy of them
  const cu::Driver& drv = ctx_.driver();
  cu::check(drv.memcpy_htod_async(ids_dev_.ptr(), ids_host_.data(), bytes, ctx_.stream()), "cuMemcpyHtoDAsync(penalized ids)");
  cu::check(drv.memcpy_dtod_async(penalized_.ptr(), logits_dev_.ptr(), V * sizeof(float), ctx_.stream()), "cuMemcpyDtoDAsync(logits)");
  cu::repeat_penalty(ctx_, penalized_.ptr(), ids_dev_.ptr(), ids.size(), penalty);
  return penalized_.ptr();
}

}  // namespace realizar::cuda_forward
