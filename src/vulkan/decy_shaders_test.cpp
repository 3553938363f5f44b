// The Vulkan shaders built from the CUDA kernels through decy (Note [Vulkan shaders from CUDA], ops.cpp):
// the build's list (TRUENO_VULKAN_DECY_SHADERS, from src/vulkan/CMakeLists.txt) is embedded with its
// CUDA source, and the ops dispatch it, so a build that silently fell back to the hand-written shaders
// fails here. Without decy every test skips visibly with the build's reason. Their results against the
// CPU, both ways: VulkanGpu.ElementwiseLayerOpsMatchTheCpu, VulkanGpu.RopeAndKvAppendMatchTheCpu
// (vulkan_test.cpp), VulkanGpu.PromptRowsMatchTheCpu (attention_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "trueno/vulkan/context.h"
#include "trueno/vulkan/ops.h"
#include "vulkan/shaders.h"
#include "vulkan/vulkan_test_support.h"

namespace trueno::vulkan {
namespace {

// The build's decy-built modules ("swiglu_decy", ...); empty when it made none.
std::vector<std::string> built_from_cuda() {
  std::vector<std::string> names;
  std::stringstream list(TRUENO_VULKAN_DECY_SHADERS);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

#define TRUENO_REQUIRE_DECY_SHADERS()                                                                                  \
  do {                                                                                                                 \
    if (built_from_cuda().empty()) GTEST_SKIP() << "skipped: the Vulkan shaders are all hand-written: " TRUENO_VULKAN_DECY_WHY; \
  } while (0)

TEST(Vulkan, ShadersFromCudaAreEmbeddedWithTheirSource) {
  TRUENO_REQUIRE_DECY_SHADERS();
  const std::vector<std::string> names = built_from_cuda();
  for (const char* op : {"swiglu_decy", "add_decy", "kv_append_decy", "add_rows_decy"})  // the modules ops.cpp asks for
    EXPECT_NE(std::find(names.begin(), names.end(), op), names.end()) << op << " is not in the build's list";
  for (const std::string& name : names) {
    const EmbeddedShader* s = find_shader(name);
    ASSERT_NE(s, nullptr) << name << " is not embedded";
    const std::string source = s->source;
    EXPECT_TRUE(source.starts_with("src/cuda/kernels/") && source.ends_with(" through decy")) << name << ": " << source;
    // The hand-written shader it stands in for stays embedded, and is another module.
    EXPECT_TRUE(name.ends_with("_decy")) << name << ": ops.cpp gives a module named <shader>_decy its CUDA kernel's interface";
    const EmbeddedShader* hand = find_shader(s->stands_for);
    ASSERT_NE(hand, nullptr) << name << " stands in for '" << s->stands_for << "', which is not embedded";
    EXPECT_STREQ(hand->stands_for, "") << hand->name;
    EXPECT_TRUE(std::string(hand->source).starts_with("src/vulkan/shaders/")) << hand->source;
    EXPECT_FALSE(hand->word_count == s->word_count && std::equal(s->words, s->words + s->word_count, hand->words))
        << name << " is the hand-written module's SPIR-V";
  }
}

TEST(VulkanGpu, OpsDispatchTheShadersFromCuda) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  TRUENO_REQUIRE_DECY_SHADERS();
  Context& c = testing::test_context();
  ASSERT_TRUE(c.decy_shaders());  // the default
  // kv_append's module stores u16 elements and indexes with u64 (lavapipe has both).
  const bool kv_runs = c.info().storage_16bit && c.info().int64;
  for (std::size_t n : {2u, 172u, 4096u}) {
    EXPECT_STREQ(swiglu_module(c, n), "swiglu_decy") << n;
    EXPECT_STREQ(add_inplace_module(c, n), "add_decy") << n;
    EXPECT_STREQ(kv_append_module(c, n, 1), kv_runs ? "kv_append_decy" : "kv_append") << n;
    EXPECT_STREQ(kv_append_module(c, n, 3), "kv_append") << n << ": the CUDA kernel appends one row";
    EXPECT_STREQ(add_bias_module(c, 20, n), c.info().int64 ? "add_rows_decy" : "add") << n;
  }
  EXPECT_STREQ(add_bias_module(c, static_cast<std::size_t>(c.info().max_workgroup_count_y) + 1, 64), "add") << "a row per workgroup row";
  // Past the 1-D grid the CUDA launch has (groups of 256), the hand-written shaders' 2-D grid.
  const std::size_t too_many = (static_cast<std::size_t>(c.info().max_workgroup_count_x) + 1) * 256;
  EXPECT_STREQ(swiglu_module(c, too_many), "swiglu") << too_many;
  EXPECT_STREQ(add_inplace_module(c, too_many), "add") << too_many;
  EXPECT_STREQ(kv_append_module(c, too_many, 1), "kv_append") << too_many;
  EXPECT_STREQ(add_bias_module(c, 1, too_many), "add") << too_many;
  c.set_decy_shaders(false);
  EXPECT_STREQ(swiglu_module(c, 4096), "swiglu");
  EXPECT_STREQ(add_inplace_module(c, 4096), "add");
  EXPECT_STREQ(kv_append_module(c, 4096, 1), "kv_append");
  EXPECT_STREQ(add_bias_module(c, 20, 4096), "add");
  c.set_decy_shaders(true);
}

}  // namespace
}  // namespace trueno::vulkan
