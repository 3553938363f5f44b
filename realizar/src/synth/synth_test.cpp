// Synthetic models: the presets' sizes match the common files, and a synthesized model loads, runs and
// has the Q4_K_M tensor mix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "realizar/model.h"
#include "realizar/synth.h"

namespace realizar {
namespace {

TEST(Synth, Llama7BQ4KMIsThe380GiBOfTheCommonFile) {
  const double gib = synthesized_size({"llama", "llama-7b", "q4_k_m", 1}) / 1073741824.0;
  std::printf("llama-7b q4_k_m: %.4f GiB\n", gib);
  EXPECT_NEAR(gib, 3.80, 0.005);
}

TEST(Synth, TinyModelLoadsRunsAndHasTheMix) {
  const std::string path = ::testing::TempDir() + "synth_tiny_qwen2.gguf";
  synthesize({"qwen2", "tiny", "q4_k_m", 7}, path);
  const auto f = gguf::File::open(path);
  const Model m(f, Config::from_gguf(f));
  EXPECT_EQ(m.config().arch, Arch::Qwen2);
  EXPECT_EQ(m.output.type, trueno::QuantType::Q6_K);
  EXPECT_EQ(m.layers[0].down.type, trueno::QuantType::Q4_K);
  EXPECT_EQ(m.layers[1].down.type, trueno::QuantType::Q6_K);  // last eighth: more bits
  EXPECT_EQ(m.layers[0].gate.type, trueno::QuantType::Q4_K);
  Session s(m, 8);
  const std::vector<std::int32_t> ids = {1, 300, 301, 302};
  s.forward(ids);
  for (float v : s.logits()) ASSERT_TRUE(std::isfinite(v));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace realizar
