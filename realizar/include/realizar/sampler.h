// Next-token sampling: repetition penalty, then greedy (temperature 0) or temperature + top-k + top-p +
// min-p filtering and a draw from a seeded generator (same seed, same tokens).
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace realizar {

struct SamplerOptions {
  float temperature = 0.8f;  // 0: greedy
  int top_k = 40;            // 0: off
  float top_p = 0.95f;       // 1: off
  float min_p = 0.05f;       // 0: off
  float repeat_penalty = 1.0f;  // 1: off (the default, as in llama.cpp: temperature 0 is plain greedy);
                                // e.g. 1.1 divides the last repeat_last_n tokens' positive logits by 1.1
  int repeat_last_n = 64;
  std::uint64_t seed = 42;
};

class Sampler {
 public:
  using Candidate = std::pair<float, std::int32_t>;  // (logit, token id)

  explicit Sampler(SamplerOptions o);  // throws InvalidArgument for out-of-range options
  // The next token from logits [n_vocab] given the tokens so far (for the repetition penalty).
  std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> history);

  // sample() in two halves, for a sequence that does the first where its logits are (Note [Sampling on
  // the device], realizar/src/backends/cuda/sample_cuda.cpp): penalize the logits of penalized(history),
  // then greedy: the best candidate by better(); else: the best candidates(n_vocab) in better() order
  // given to draw(). The same options, arithmetic and generator, so the same tokens.
  const SamplerOptions& options() const { return o_; }
  bool greedy() const { return o_.temperature == 0.0f; }
  // The distinct tokens among the last repeat_last_n of history that lie in [0, n_vocab), in the order
  // first seen; none when the penalty is off.
  std::vector<std::int32_t> penalized(std::span<const std::int32_t> history, std::size_t n_vocab) const;
  // A penalized token's logit: positive ones divided by repeat_penalty, the rest multiplied by it.
  float penalize(float logit) const { return logit > 0 ? logit / o_.repeat_penalty : logit * o_.repeat_penalty; }
  // The ranking of candidates: larger logit first, the lower id among equal logits (Note [Greedy ties and NaN]).
  static bool better(const Candidate& a, const Candidate& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); }
  // How many of the best candidates the draw reads: top_k, or every token when top_k is 0 or >= n_vocab.
  std::size_t candidates(std::size_t n_vocab) const;
  // Temperature softmax, top-p, min-p and a draw (one number from the generator) over best, the best
  // candidates(n_vocab) penalized candidates in better() order; best is overwritten.
  std::int32_t draw(std::span<Candidate> best);
  // Note [Temperature alone] (sampler.cpp): a temperature with no filter (top_k off, top_p 1, min_p 0)
  // draws over every token in id order. temperature_alone says whether these options do; next_uniform
  // takes the draw's one number u in [0, 1) from the generator; pick_in_id_order is the draw over the
  // weights w[i] = exp((logit_i - max) * inverse_temperature()) with u, which a device can follow bit for bit.
  static constexpr std::size_t kDrawBlock = 256;
  bool temperature_alone(std::size_t n_vocab) const;
  double next_uniform();
  float inverse_temperature() const { return 1.0f / o_.temperature; }
  std::int32_t pick_in_id_order(std::span<const float> w, double u);
  // Puts the best n of cand (in id order on entry) first, in better() order; the order of the rest is
  // unspecified. Note [Ranking the whole vocabulary] (sampler.cpp).
  static void rank_candidates(std::vector<Candidate>& cand, std::size_t n, std::vector<Candidate>& scratch);

 private:
  // Note [Temperature alone] (sampler.cpp): the draw over every token in id order; nullopt with a NaN or
  // an infinite best logit (the ranked path decides those).
  std::optional<std::int32_t> draw_in_id_order(std::span<const Candidate> cand);
  SamplerOptions o_;
  std::mt19937_64 rng_;
  std::vector<Candidate> cand_, scratch_;
  std::vector<float> weights_;
  std::vector<double> block_sums_;
};

}  // namespace realizar
