// Launchers for the sampling steps on the device (kernels/sample_ops.cu): the repetition penalty, greedy's
// argmax and the top-k candidates, each as realizar's CPU sampler computes it, so that a decode step copies
// back a token id or k candidates instead of the logits. Pointers are device pointers; every launch is
// asynchronous on the context's stream.
#pragma once
#include <cstddef>
#include <cstdint>

#include "trueno/cuda/context.h"

namespace trueno::cuda {

// The most candidates top_k keeps (a sampler with a larger top_k, or none, reads every logit on the host).
constexpr int kMaxTopK = 1024;

// Scratch for sampling from up to n logits: argmax's per-block results, top-k's rounds of keys, and the
// temperature draw's weights and block sums.
struct SampleScratch {
  SampleScratch(Context& c, std::size_t n);
  std::size_t n;
  DeviceBuffer partial, keys_a, keys_b, weights, sums;
};

// What argmax writes.
struct ArgmaxResult {
  std::int32_t index;       // the id the CPU's greedy picks (Note [Greedy ties and NaN], realizar's sampler.cpp)
  std::int32_t non_finite;  // 1 when any logit is infinite or NaN
};
// out (an ArgmaxResult) = argmax of x[n]: the largest logit, the lowest id among equals, NaN never (but
// id 0 when x[0] is NaN), as std::min_element under the CPU sampler's ranking.
void argmax(Context& c, api::CUdeviceptr x, std::size_t n, SampleScratch& s, api::CUdeviceptr out);

// x[ids[i]] for the n_ids distinct ids (int32) penalized in place: positive logits / penalty, others * penalty.
void repeat_penalty(Context& c, api::CUdeviceptr x, api::CUdeviceptr ids, std::size_t n_ids, float penalty);

// What top_k writes: a TopKHeader, then header.count TopKCandidates.
struct TopKHeader {
  std::int32_t any_nan;  // 1 when a logit is NaN: the CPU's order is then its sort's own (use the logits)
  std::int32_t count;
};
struct TopKCandidate {
  float logit;
  std::int32_t id;
};
inline std::size_t top_k_bytes(int k) { return sizeof(TopKHeader) + static_cast<std::size_t>(k) * sizeof(TopKCandidate); }
// out (top_k_bytes(k)) = the k best (logit, id) of x[n], best first: larger logit, then lower id (the CPU's
// std::partial_sort under the same ranking, when no logit is NaN). 1 <= k <= min(n, kMaxTopK).
void top_k(Context& c, api::CUdeviceptr x, std::size_t n, int k, SampleScratch& s, api::CUdeviceptr out);

// A temperature with no filter (Note [Temperature alone], realizar's sampler.cpp): out (int) = the id
// Sampler::pick_in_id_order draws from x[n] with weights exp((x - max) * inv_t) and the generator's number
// u, bit for bit (the CPU's exp, the same summation order); -1 when a logit is NaN or the max is infinite.
void temperature_draw(Context& c, api::CUdeviceptr x, std::size_t n, float inv_t, double u, SampleScratch& s, api::CUdeviceptr out);

}  // namespace trueno::cuda
