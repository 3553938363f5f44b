// Sampling steps in the usual order: penalty -> (greedy | top-k -> temperature softmax -> top-p -> min-p -> draw).
//
// Note [Ranking the whole vocabulary]
// With top_k off and top-p or min-p on (or top_k above 1024) every token is a candidate and ranking them
// is a sort of n_vocab pairs: 4 ms for a 32K vocabulary and 24 ms for 152K with
// std::partial_sort, more than a decode step on a GPU. better() is a strict total order when no logit is
// NaN (the logit descending, then the id ascending; -0 equals +0), so any correct sort gives the same
// sequence: rank_candidates sorts large rankings with a stable LSD radix sort over a 32-bit key that
// orders floats descending, starting from the candidates in id order (ties then keep the lower id
// first). The tokens drawn are the same as before, bit for bit (sampler_test.cpp checks it against
// partial_sort); with a NaN the order is partial_sort's own and that path stays.
//
// Note [Temperature alone]
// A request that sets only a temperature (top_k 0, top_p 1, min_p 0; the OpenAI API's default) keeps
// every token, so no filter needs a ranking: the draw walks the tokens in id order, each weighted by
// exp((logit - max) x (1 / temperature)) (trueno's exp: the same bits on every CPU tier), with one number
// u from the generator as before. The same distribution as ranking first, without the sort (0.59 -> 0.1
// ms for a 32K vocabulary): the serving step's critical path at one stream. The walk is defined so that a
// GPU can follow it to the bit (src/cuda/kernels/sample_ops.cu, temperature_draw): the weights summed in
// double, in id order within blocks of kDrawBlock ids, then the blocks' sums in order; r = u x total
// walks the blocks, then the ids of the block it falls in. A seed gives other tokens than the ranked walk
// did before 2026-12-01; with a NaN the ranked path stays (Note [Greedy ties and NaN]).
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
#include <cstring>
#include <limits>
#include <utility>

#include "realizar/sampler.h"
#include "trueno/error.h"
#include "trueno/ops.h"
#include "util/strcat.h"

namespace realizar {

namespace {

// A key whose ascending order is better()'s order of the logit: floats descending, -0 as +0.
std::uint32_t descending_key(float f) {
  if (f == 0.0f) f = 0.0f;
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u = (u & 0x80000000u) != 0 ? ~u : u ^ 0x80000000u;  // ascending floats -> ascending unsigned
  return ~u;
}

// Stable LSD radix sort of cand (in id order) by descending_key: 11 + 11 + 10 bits.
void radix_rank(std::vector<Sampler::Candidate>& cand, std::vector<Sampler::Candidate>& tmp) {
  constexpr int kShift[3] = {0, 11, 22};
  constexpr std::uint32_t kMask[3] = {0x7FF, 0x7FF, 0x3FF};
  std::vector<std::uint32_t> count(3 * 2048, 0);
  for (const auto& c : cand) {
    const std::uint32_t k = descending_key(c.first);
    for (int p = 0; p < 3; ++p) ++count[p * 2048 + ((k >> kShift[p]) & kMask[p])];
  }
  tmp.resize(cand.size());
  for (int p = 0; p < 3; ++p) {
    std::uint32_t* h = &count[p * 2048];
    std::uint32_t sum = 0;
    for (int d = 0; d < 2048; ++d) sum += std::exchange(h[d], sum);  // exclusive prefix sums
    for (const auto& c : cand) tmp[h[(descending_key(c.first) >> kShift[p]) & kMask[p]]++] = c;
    cand.swap(tmp);
  }
}

}  // namespace

void Sampler::rank_candidates(std::vector<Candidate>& cand, std::size_t n, std::vector<Candidate>& scratch) {
  constexpr std::size_t kRadixFrom = 1024;  // below, partial_sort's heap over n is already cheap
  const bool any_nan = std::any_of(cand.begin(), cand.end(), [](const Candidate& c) { return std::isnan(c.first); });
  if (n > kRadixFrom && !any_nan) return radix_rank(cand, scratch);  // Note [Ranking the whole vocabulary]
  std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(n), cand.end(), better);
}

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
  if (temperature_alone(cand_.size()))  // Note [Temperature alone]
    if (const auto id = draw_in_id_order(cand_)) return *id;
  rank_candidates(cand_, n, scratch_);
  return draw(std::span(cand_).first(n));
}

bool Sampler::temperature_alone(std::size_t n_vocab) const {
  return !greedy() && candidates(n_vocab) == n_vocab && o_.top_p >= 1.0f && o_.min_p == 0.0f;
}

double Sampler::next_uniform() { return std::generate_canonical<double, std::numeric_limits<double>::digits>(rng_); }

std::int32_t Sampler::pick_in_id_order(std::span<const float> w, double u) {
  const std::size_t n = w.size(), blocks = (n + kDrawBlock - 1) / kDrawBlock;
  block_sums_.assign(blocks, 0.0);
  for (std::size_t b = 0; b < blocks; ++b) {
    double s = 0;
    for (std::size_t i = b * kDrawBlock; i < std::min(n, (b + 1) * kDrawBlock); ++i) s += w[i];
    block_sums_[b] = s;
  }
  double total = 0;
  for (const double s : block_sums_) total += s;
  double r = u * total;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (!(r < block_sums_[b])) {
      r -= block_sums_[b];
      continue;
    }
    for (std::size_t i = b * kDrawBlock; i < std::min(n, (b + 1) * kDrawBlock); ++i) {
      if (w[i] == 0.0f) continue;
      if (r < w[i]) return static_cast<std::int32_t>(i);
      r -= w[i];
    }
  }
  for (std::size_t i = n; i-- > 0;)  // r left over from rounding: the last token with weight
    if (w[i] != 0.0f) return static_cast<std::int32_t>(i);
  return 0;
}

std::optional<std::int32_t> Sampler::draw_in_id_order(std::span<const Candidate> cand) {
  float top = -INFINITY;
  for (const auto& c : cand) {
    if (std::isnan(c.first)) return std::nullopt;  // the ranking decides where NaNs go
    top = std::max(top, c.first);
  }
  if (!std::isfinite(top)) return std::nullopt;
  weights_.resize(cand.size());
  const float inv_t = inverse_temperature();
  for (std::size_t i = 0; i < cand.size(); ++i) weights_[i] = (cand[i].first - top) * inv_t;
  trueno::ops::exp(weights_, weights_);  // SIMD, and the same bits on every CPU tier (contracts/elementwise.yaml)
  return pick_in_id_order(weights_, next_uniform());
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
