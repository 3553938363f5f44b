// A kernel template's instances through decy (Note [Template kernels], decy/parse.cpp): testdata/templates.cu's
// row_max<256, float> and row_max<64, int>, each its own shader, against the CPU's row maxima (exact: a
// maximum is one of its inputs) under contracts/gpu/decy.yaml.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

template <class T>
void check_row_max(const char* spv, std::uint32_t block, const std::vector<T>& x, int rows, int n) {
  Buffer bx(context(), x.size() * 4), bo(context(), static_cast<std::size_t>(rows) * 4);
  bx.upload(x.data(), x.size() * 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv(spv, spirv(spv), 2, 4, spec);
  Recorder rec(context());
  rec.dispatch(p, {&bx, &bo}, n, static_cast<std::uint32_t>(rows));
  rec.submit();
  std::vector<T> got(rows);
  bo.download(got.data(), got.size() * 4);
  std::vector<float> gpu, cpu;
  for (int r = 0; r < rows; ++r) {
    gpu.push_back(static_cast<float>(got[r]));
    cpu.push_back(static_cast<float>(*std::max_element(x.begin() + r * n, x.begin() + (r + 1) * n)));
  }
  trueno::test::expect_gpu_contract("decy", "templates_row_max", gpu, cpu, std::string(spv) + ", " + std::to_string(rows) + " rows of " + std::to_string(n));
}

TEST(DecyVulkanGpu, TemplateKernelInstancesMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int rows = 7;
  for (const int n : {1, 300, 1000}) {
    const auto xf = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 3.0f);
    check_row_max("row_max_256_float", 256, xf, rows, n);
    std::vector<std::int32_t> xi(xf.size());
    std::uniform_int_distribution<std::int32_t> any(-1000000, 1000000);
    for (auto& v : xi) v = any(rng());
    check_row_max("row_max_64_int", 64, xi, rows, n);
  }
}

#else
TEST(DecyVulkanGpu, TemplatesNeedTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
