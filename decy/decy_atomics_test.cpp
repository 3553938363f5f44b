// decy's 32-bit integer atomics on a Vulkan device (testdata/atomics.cu): every result that does not depend
// on the order the threads ran in, against the CPU, under contracts/gpu/decy.yaml.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

TEST(DecyVulkanGpu, IntegerAtomicsMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  static const std::uint32_t spec[1] = {128};
  const Pipeline& p = context().pipeline_from_spirv("atomics", spirv("atomics"), 3, 4, spec);
  for (const int n : {1, 1000, 5000}) {
    std::vector<std::int32_t> x(n);
    std::uniform_int_distribution<std::int32_t> any(INT_MIN, INT_MAX);
    for (auto& v : x) v = any(rng());
    const std::int32_t out0[8] = {INT_MAX, INT_MIN, 0, -1, 0, 0, 0, 0};
    const std::uint32_t bits0[3] = {0u, 0xffffffffu, 0u};
    Buffer bx(context(), x.size() * 4), bo(context(), sizeof out0), bb(context(), sizeof bits0);
    bx.upload(x.data(), x.size() * 4), bo.upload(out0, sizeof out0), bb.upload(bits0, sizeof bits0);
    Recorder rec(context());
    rec.dispatch(p, {&bx, &bo, &bb}, n, static_cast<std::uint32_t>((n + 127) / 128));
    rec.submit();
    std::int32_t out[8];
    std::uint32_t bits[3];
    bo.download(out, sizeof out), bb.download(bits, sizeof bits);
    std::int32_t mn = INT_MAX, mx = INT_MIN, sum = 0;
    std::uint32_t o = 0, a = 0xffffffffu, xr = 0;
    for (const std::int32_t v : x) {
      mn = std::min(mn, v), mx = std::max(mx, v), sum += v & 255;
      o |= 1u << (v & 31), a &= ~(1u << (v & 31)), xr ^= static_cast<std::uint32_t>(v);
    }
    const std::int64_t indices = static_cast<std::int64_t>(n) * (n - 1) / 2;
    // As floats for the contract's exact comparison: each value compared bit for bit through its own float.
    const auto f = [](std::int64_t v) { return static_cast<float>(v); };
    const std::vector<float> gpu = {f(out[0]), f(out[1]), f(out[2]), f(bits[0]), f(bits[1]), f(bits[2]), f(out[3] >= 0 && out[3] < n), f(out[4]),
                                    f(static_cast<std::int64_t>(out[5]) + out[6]), f(out[7])};
    const std::vector<float> cpu = {f(mn), f(mx), f(sum), f(o), f(a), f(xr), 1.0f, 1.0f, f(indices), f(n)};
    for (std::size_t i = 0; i < gpu.size(); ++i) EXPECT_EQ(gpu[i], cpu[i]) << "result " << i << ", n = " << n;
    EXPECT_EQ(bits[0], o) << n;
    EXPECT_EQ(bits[1], a) << n;
    EXPECT_EQ(bits[2], xr) << n;
    trueno::test::expect_gpu_contract("decy", "atomics", gpu, cpu, "n = " + std::to_string(n));
  }
}

#else
TEST(DecyVulkanGpu, AtomicsNeedTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
