// Dynamic shared memory through decy (Note [Dynamic shared memory], decy/glsl.cpp; testdata/dynamic_shared.cu):
// one extern __shared__ buffer carved into a float and an int array (block_argmax, exact), and compound
// assignments on it (block_sum, a tree of f32 additions: within the decy contract's bounds of the CPU's
// sum in f64). Specialization constant 1 carries CUDA's dynamic shared bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

TEST(DecyVulkanGpu, DynamicSharedMemoryMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  for (const std::uint32_t block : {64u, 256u}) {
    // CUDA's launch: block_argmax<<<groups, block, 8 * block>>> (floats then ints), block_sum<<<.., 4 * block>>>.
    const std::uint32_t argmax_spec[2] = {block, 8 * block}, sum_spec[2] = {block, 4 * block};
    const Pipeline& argmax = context().pipeline_from_spirv("block_argmax", spirv("block_argmax"), 3, 4, argmax_spec);
    const Pipeline& sum = context().pipeline_from_spirv("block_sum", spirv("block_sum"), 2, 4, sum_spec);
    for (const int n : {1, 1000, 4097}) {
      auto x = trueno::test::random_normal(static_cast<std::size_t>(n), rng(), 1.0f);
      if (n > 600) x[600] = x[500] = 9.0f;  // a tie: the first index wins
      const std::uint32_t groups = (static_cast<std::uint32_t>(n) + block - 1) / block;
      Buffer bx = upload(x), bb(context(), groups * 4), bw(context(), groups * 4), bs(context(), groups * 4);
      Recorder rec(context());
      rec.dispatch(argmax, {&bx, &bb, &bw}, n, groups);
      rec.dispatch(sum, {&bx, &bs}, n, groups);
      rec.submit();
      std::vector<std::int32_t> where(groups);
      bw.download(where.data(), groups * 4);
      const std::vector<float> best = download(bb, groups);
      std::vector<float> gpu, cpu, sums_cpu;  // per block: the value, then its index
      for (std::uint32_t g = 0; g < groups; ++g) {
        int at = static_cast<int>(g * block);
        double s = 0;
        for (int i = static_cast<int>(g * block); i < static_cast<int>(std::min<std::uint32_t>(n, (g + 1) * block)); ++i) {
          if (x[i] > x[at]) at = i;
          s += x[i];
        }
        cpu.push_back(x[at]), sums_cpu.push_back(static_cast<float>(s));
        gpu.push_back(best[g]), gpu.push_back(static_cast<float>(where[g])), cpu.push_back(static_cast<float>(at));
      }
      const std::string what = "block " + std::to_string(block) + ", n = " + std::to_string(n);
      trueno::test::expect_gpu_contract("decy", "dynamic_shared", gpu, cpu, "block_argmax (values, indices), " + what);
      trueno::test::expect_gpu_contract("decy", "dynamic_shared", download(bs, groups), sums_cpu, "block_sum, " + what, 1);
    }
  }
}

#else
TEST(DecyVulkanGpu, DynamicSharedNeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
