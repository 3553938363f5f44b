// CUDA's half types through decy (Note [Half types], decy/glsl_support.cpp; testdata/halves.cu): __half
// + - * / (each the f16 nearest the exact result, as CUDA's), negation and comparisons; __half2 pairs;
// __nv_bfloat16 from f32 (round to nearest even, a NaN as 0x7fff: CUDA's) and back, against the CPU's
// f16 / bf16 conversions (trueno::ops), every bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "trueno/ops.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

std::uint16_t f16(float v) {
  std::uint16_t h;
  trueno::ops::f32_to_f16(std::span<const float>(&v, 1), std::span<std::uint16_t>(&h, 1));
  return h;
}
float f32(std::uint16_t h) {
  float v;
  trueno::ops::f16_to_f32(std::span<const std::uint16_t>(&h, 1), std::span<float>(&v, 1));
  return v;
}

TEST(DecyVulkanGpu, HalfTypesMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().storage_16bit) GTEST_SKIP() << "skipped: the device lacks 16-bit storage";
  const int n = 3000;
  const auto xa = trueno::test::random_normal(n, rng(), 30.0f), xb = trueno::test::random_normal(n, rng(), 3.0f),
             xp = trueno::test::random_normal(2 * n, rng(), 4.0f);
  auto xf = trueno::test::random_normal(n, rng(), 1e3f);
  xf[0] = std::numeric_limits<float>::quiet_NaN(), xf[1] = std::numeric_limits<float>::infinity(), xf[2] = 1.0f + 1.0f / 256.0f;  // a tie
  std::vector<std::uint16_t> a(n), b(n);
  std::vector<std::uint32_t> p(n);
  for (int i = 0; i < n; ++i) {
    a[i] = f16(xa[i]), b[i] = f16(xb[i] == 0.0f ? 1.0f : xb[i]);
    if (i % 7 == 0) b[i] = a[i];  // equal operands: the comparison's middle case
    p[i] = f16(xp[2 * i]) | (static_cast<std::uint32_t>(f16(xp[2 * i + 1])) << 16);
  }
  Buffer ba(context(), n * 2), bb(context(), n * 2), bo(context(), 6 * n * 2), bp(context(), n * 4), bpo(context(), 3 * n * 4);
  Buffer bx = upload(xf), bbf(context(), n * 2), bback(context(), n * 4);
  ba.upload(a.data(), n * 2), bb.upload(b.data(), n * 2), bp.upload(p.data(), n * 4);
  static const std::uint32_t spec[1] = {128};
  const Pipeline& pl = context().pipeline_from_spirv("halves", spirv("halves"), 8, 4, spec);
  Recorder rec(context());
  rec.dispatch(pl, {&ba, &bb, &bo, &bp, &bpo, &bx, &bbf, &bback}, n, (n + 127) / 128);
  rec.submit();
  std::vector<std::uint16_t> out(6 * n), bf(n);
  std::vector<std::uint32_t> po(3 * n);
  bo.download(out.data(), out.size() * 2), bpo.download(po.data(), po.size() * 4), bbf.download(bf.data(), n * 2);
  const auto back = download(bback, n);
  std::vector<std::uint16_t> bf_cpu(n);
  trueno::ops::f32_to_bf16(xf, bf_cpu);
  bf_cpu[0] = 0x7fff;  // CUDA's __float2bfloat16 of a NaN (trueno's keeps the NaN's payload, quieted)
  std::vector<float> gpu, cpu;  // every output as its bits, compared exactly
  const auto bits = [](auto v) { return static_cast<float>(v); };
  for (int i = 0; i < n; ++i) {
    const float u = f32(a[i]), v = f32(b[i]);
    const std::uint16_t want[6] = {f16(u + v), f16(u - v), f16(u * v), f16(u / v), static_cast<std::uint16_t>(a[i] ^ 0x8000u),
                                   f16(u < v ? 1.0f : u == v ? 0.5f : 0.0f)};
    for (int k = 0; k < 6; ++k) gpu.push_back(bits(out[6 * i + k])), cpu.push_back(bits(want[k]));
    const float q0 = f32(static_cast<std::uint16_t>(p[i] & 0xffff)), q1 = f32(static_cast<std::uint16_t>(p[i] >> 16));
    const std::uint32_t pw[3] = {f16(q0 + u) | (static_cast<std::uint32_t>(f16(q1 + v)) << 16),
                                 f16(q0 * q0) | (static_cast<std::uint32_t>(f16(q1 * q1)) << 16), (p[i] >> 16) | (p[i] << 16)};
    for (int k = 0; k < 3; ++k) gpu.push_back(bits(po[3 * i + k] & 0xffffu)), gpu.push_back(bits(po[3 * i + k] >> 16)),
                                cpu.push_back(bits(pw[k] & 0xffffu)), cpu.push_back(bits(pw[k] >> 16));
    gpu.push_back(bits(bf[i])), cpu.push_back(bits(bf_cpu[i]));
    float bfv;
    const std::uint32_t w = static_cast<std::uint32_t>(bf_cpu[i]) << 16;
    std::memcpy(&bfv, &w, 4);
    const float want_back = (bfv + q0) - q1;
    if (!std::isnan(want_back)) gpu.push_back(back[i]), cpu.push_back(want_back);
  }
  trueno::test::expect_gpu_contract("decy", "halves", gpu, cpu, "3000 of each");
}

#else
TEST(DecyVulkanGpu, HalvesNeedTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
