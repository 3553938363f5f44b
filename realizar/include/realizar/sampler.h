// Next-token sampling: repetition penalty, then greedy (temperature 0) or temperature + top-k + top-p +
// min-p filtering and a draw from a seeded generator (same seed, same tokens).
#pragma once
#include <cstdint>
#include <random>
#include <span>
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
  explicit Sampler(SamplerOptions o);  // throws InvalidArgument for out-of-range options
  std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> history);

 private:
  SamplerOptions o_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, std::int32_t>> cand_;
};

}  // namespace realizar
