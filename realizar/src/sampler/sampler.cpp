// Sampling steps in the usual order: penalty -> (greedy | top-k -> temperature softmax -> top-p -> min-p -> draw).
//
// Note [Greedy ties and NaN]
// Candidates rank by better(): the larger logit, then the lower id. Greedy is std::min_element under
// that order, which scans from id 0 and moves only to a strictly better candidate. NaN compares false
// both ways, so: when logit 0 is NaN nothing replaces it and greedy returns 0; otherwise NaNs never win
// and greedy returns the best finite-or-infinite logit, the lowest id among equals (-0 equals +0). The
// device argmax (src/cuda/kernels/sample_ops.cu) implements this rule. For top-k, NaN makes better() no
// strict weak order, so std::partial_sort's result is its own: a device sequence that sees a NaN takes
// the host path (sample_cuda.cpp).
#include <algorithm>
#include <cmath>

#include "realizar/sampler.h"
#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar {

Sampler::Sampler(SamplerOptions o) : o_(o), rng_(o.seed) {
  if (!(o.temperature >= 0)) throw trueno::InvalidArgument(strcat("--temp must be >= 0, got ", o.temperature));
  if (o.top_k < 0) throw trueno::InvalidArgument(strcat("--top-k must be >= 0, got ", o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1)) throw trueno::InvalidArgument(strcat("--top-p must be in (0, 1], got ", o.top_p));
  if (!(o.min_p >= 0 && o.min_p < 1)) throw trueno::InvalidArgument(strcat("--min-p must be in [0, 1), got ", o.min_p));
  if (!(o.repeat_penalty > 0)) throw trueno::InvalidArgument(strcat("--repeat-penalty must be > 0, got ", o.repeat_penalty));
}

std::vector<std::int32_t> Sampler::penalized(std::span<const std::int32_t> history, std::size_t n_vocab) const {
  std::vector<std::int32_t> ids;
  if (o_.repeat_penalty == 1.0f) return ids;
  // A negative repeat_last_n converts to a huge size_t: the whole history, as it always has.
  const std::size_t from = history.size() > static_cast<std::size_t>(o_.repeat_last_n) ? history.size() - o_.repeat_last_n : 0;
  std::vector<bool> seen(n_vocab, false);
  for (std::size_t i = from; i < history.size(); ++i)
    if (history[i] >= 0 && static_cast<std::size_t>(history[i]) < n_vocab && !seen[history[i]]) {
      seen[history[i]] = true;
      ids.push_back(history[i]);
    }
  return ids;
}

std::size_t Sampler::candidates(std::size_t n_vocab) const {
  return o_.top_k > 0 && static_cast<std::size_t>(o_.top_k) < n_vocab ? static_cast<std::size_t>(o_.top_k) : n_vocab;
}

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> history) {
  cand_.resize(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) cand_[i] = {logits[i], static_cast<std::int32_t>(i)};
  for (const std::int32_t id : penalized(history, logits.size())) cand_[id].first = penalize(cand_[id].first);
  if (greedy()) return std::min_element(cand_.begin(), cand_.end(), better)->second;  // Note [Greedy ties and NaN]
  const std::size_t n = candidates(cand_.size());
  std::partial_sort(cand_.begin(), cand_.begin() + n, cand_.end(), better);
  return draw(std::span(cand_).first(n));
}

std::int32_t Sampler::draw(std::span<Candidate> best) {
  const float top = best[0].first;
  double total = 0;
  for (auto& c : best) total += (c.first = std::exp((c.first - top) / o_.temperature));
  for (auto& c : best) c.first = static_cast<float>(c.first / total);
  // top-p: the smallest prefix whose mass reaches p; min-p: drop tokens below min_p x the best one.
  double mass = 0;
  std::size_t keep = 0;
  while (keep < best.size() && (keep == 0 || mass < o_.top_p)) mass += best[keep++].first;
  while (keep > 1 && best[keep - 1].first < o_.min_p * best[0].first) --keep;
  best = best.first(keep);
  double sum = 0;
  for (const auto& c : best) sum += c.first;
  std::uniform_real_distribution<double> u(0.0, sum);
  double r = u(rng_);
  for (const auto& c : best) {
    if (r < c.first) return c.second;
    r -= c.first;
  }
  return best.back().second;
}

}  // namespace realizar
