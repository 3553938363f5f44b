// Synthetic GGUF models with the exact shapes of common presets, random weights and a dummy
// SentencePiece vocabulary: benchmark inputs where no model can be downloaded.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace realizar {

struct SynthOptions {
  std::string arch = "llama";    // llama | qwen2
  std::string preset = "tiny";   // tiny | llama-1b | llama-7b | llama-13b
  std::string quant = "q4_k_m";  // f32 | f16 | q8_0 | q4_0 | q4_k_m | q6_k
  std::uint64_t seed = 1;
};

// Writes the model to path; progress(done_bytes, total_bytes). Returns the file size. Throws
// InvalidArgument naming an unknown arch/preset/quant and the valid ones.
std::uint64_t synthesize(const SynthOptions& o, const std::string& path,
                         const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

// The size synthesize() would write, without generating any weights.
std::uint64_t synthesized_size(const SynthOptions& o);

}  // namespace realizar
