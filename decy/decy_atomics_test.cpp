// decy's 32-bit integer atomics on a Vulkan device (testdata/atomics.cu): every result that does not depend
// on the order the threads ran in, against the CPU; and __ballot_sync (testdata/ballot.cu) with --warp32
// and, on subgroups of 32, as subgroupBallot. Under contracts/gpu/decy.yaml.
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

// Float atomicAdd / atomicExch (GL_EXT_shader_atomic_float): sums whose order the threads choose, against
// the CPU's in f64 under bounds; the exchanges' values, taken out and left, add up to all of them.
TEST(DecyVulkanGpu, FloatAtomicsMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().float_atomics) GTEST_SKIP() << "skipped: the device lacks VK_EXT_shader_atomic_float's f32 add and exchange";
  static const std::uint32_t spec[1] = {128};
  const Pipeline& p = context().pipeline_from_spirv("atomics_float", spirv("atomics_float"), 4, 4, spec);
  for (const int n : {1, 1000, 5000}) {
    const auto x = trueno::test::random_normal(static_cast<std::size_t>(n), rng(), 1.0f);
    const int groups = (n + 127) / 128;
    std::vector<float> out0(8 + static_cast<std::size_t>(groups), 0.0f);
    const float initial = 0.25f;
    Buffer bx = upload(x), bo = upload(out0), bl = upload({initial}), bt = upload({0.0f});
    Recorder rec(context());
    rec.dispatch(p, {&bx, &bo, &bl, &bt}, n, static_cast<std::uint32_t>(groups));
    rec.submit();
    const auto out = download(bo, out0.size());
    std::vector<double> want(out0.size() + 1, 0.0);
    double all = initial;
    for (int i = 0; i < n; ++i) want[static_cast<std::size_t>((i / 128) % 8)] += x[i], want[8 + static_cast<std::size_t>(i / 128)] += x[i], all += x[i];
    std::vector<float> gpu(out.begin(), out.end()), cpu(want.begin(), want.end() - 1);
    gpu.push_back(download(bl, 1)[0] + download(bt, 1)[0]), cpu.push_back(static_cast<float>(all));
    trueno::test::expect_gpu_contract("decy", "atomics_float", gpu, cpu, "n = " + std::to_string(n));
  }
}

void check_ballot(const std::string& spv) {
  static const std::uint32_t spec[1] = {256};
  const Pipeline& p = context().pipeline_from_spirv(spv, spirv(spv), 2, 4, spec);
  for (const int n : {1, 100, 1000}) {  // 100, 1000: a last warp and block only partly inside n
    const auto x = trueno::test::random_normal(static_cast<std::size_t>(n), rng(), 1.0f);
    const int warps = (n + 31) / 32;
    Buffer bx = upload(x), bm(context(), static_cast<std::size_t>(warps) * 4);
    Recorder rec(context());
    rec.dispatch(p, {&bx, &bm}, n, static_cast<std::uint32_t>((n + 255) / 256));
    rec.submit();
    std::vector<std::uint32_t> got(warps);
    bm.download(got.data(), got.size() * 4);
    std::vector<float> gpu, cpu;
    for (int w = 0; w < warps; ++w) {
      std::uint32_t want = 0;
      for (int l = 0; l < 32 && w * 32 + l < n; ++l) want |= (x[w * 32 + l] > 0.0f ? 1u : 0u) << l;
      EXPECT_EQ(got[w], want) << spv << ", warp " << w << " of n = " << n;
      gpu.push_back(static_cast<float>(got[w] >> 16)), gpu.push_back(static_cast<float>(got[w] & 0xffffu));
      cpu.push_back(static_cast<float>(want >> 16)), cpu.push_back(static_cast<float>(want & 0xffffu));
    }
    trueno::test::expect_gpu_contract("decy", "ballot", gpu, cpu, spv + ", n = " + std::to_string(n));
  }
}

TEST(DecyVulkanGpu, BallotMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  check_ballot("ballot_warp32");
}

TEST(DecyVulkanGpu, BallotOnSubgroupsOf32MatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (info.subgroup_size != 32) GTEST_SKIP() << "skipped: the device's subgroups have " << info.subgroup_size << " lanes, CUDA's warps 32 (BallotMatchesTheCpu runs the --warp32 build)";
  check_ballot("ballot");
}

#else
TEST(DecyVulkanGpu, AtomicsNeedTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
