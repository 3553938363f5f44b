// Sampling steps in the usual order: penalty -> (greedy | top-k -> temperature softmax -> top-p -> min-p -> draw).
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

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> history) {
  cand_.resize(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) cand_[i] = {logits[i], static_cast<std::int32_t>(i)};
  if (o_.repeat_penalty != 1.0f) {
    const std::size_t from = history.size() > static_cast<std::size_t>(o_.repeat_last_n) ? history.size() - o_.repeat_last_n : 0;
    std::vector<bool> seen(logits.size(), false);
    for (std::size_t i = from; i < history.size(); ++i)
      if (history[i] >= 0 && static_cast<std::size_t>(history[i]) < logits.size() && !seen[history[i]]) {
        seen[history[i]] = true;
        float& l = cand_[history[i]].first;
        l = l > 0 ? l / o_.repeat_penalty : l * o_.repeat_penalty;
      }
  }
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  if (o_.temperature == 0.0f) return std::min_element(cand_.begin(), cand_.end(), by_logit)->second;

  std::size_t n = cand_.size();
  if (o_.top_k > 0 && static_cast<std::size_t>(o_.top_k) < n) n = o_.top_k;
  std::partial_sort(cand_.begin(), cand_.begin() + n, cand_.end(), by_logit);
  cand_.resize(n);
  const float top = cand_[0].first;
  double total = 0;
  for (auto& c : cand_) total += (c.first = std::exp((c.first - top) / o_.temperature));
  for (auto& c : cand_) c.first = static_cast<float>(c.first / total);
  // top-p: the smallest prefix whose mass reaches p; min-p: drop tokens below min_p x the best one.
  double mass = 0;
  std::size_t keep = 0;
  while (keep < cand_.size() && (keep == 0 || mass < o_.top_p)) mass += cand_[keep++].first;
  while (keep > 1 && cand_[keep - 1].first < o_.min_p * cand_[0].first) --keep;
  cand_.resize(keep);
  double sum = 0;
  for (const auto& c : cand_) sum += c.first;
  std::uniform_real_distribution<double> u(0.0, sum);
  double r = u(rng_);
  for (const auto& c : cand_) {
    if (r < c.first) return c.second;
    r -= c.first;
  }
  return cand_.back().second;
}

}  // namespace realizar
