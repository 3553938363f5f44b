// The prelude's quantize_block_q8_k through its three kernels (quantize_q8_k, and the decode's fusions
// rmsnorm_quantize and swiglu_quantize), translated with decy --warp32: their Q8_K blocks against the CPU's
// quantize(Q8_K) bit for bit, their f32 outputs against trueno::ops, under contracts/gpu/decy.yaml.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "quant/blocks.h"
#include "support/gpu_contract.h"
#include "trueno/ops.h"
#include "trueno/quant.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

const Pipeline& pipeline(const std::string& name, std::uint32_t buffers, std::uint32_t push_bytes) {
  return warp32_pipeline(name, buffers, push_bytes);  // decy_vulkan_test_support.h
}

// The three arrays a kernel writes: q[n], d[n / 256], bsums[n / 16] (Q8Activations' layout).
struct Q8Arrays {
  explicit Q8Arrays(std::size_t n) : n(n), q(context(), n), d(context(), n / 256 * 4), bsums(context(), n / 16 * 2) {}
  std::size_t n;
  Buffer q, d, bsums;
};

// How many Q8_K blocks of the GPU's arrays differ from the CPU's quantize(Q8_K) of `values` (in d's bits,
// any of the 256 q or the 16 bsums).
std::size_t blocks_differing(std::span<const float> values, const Q8Arrays& g) {
  const std::size_t n = values.size();
  std::vector<std::byte> cpu(trueno::quant_row_bytes(trueno::QuantType::Q8_K, n));
  trueno::quantize(trueno::QuantType::Q8_K, values, cpu);
  std::vector<std::int8_t> gq(n);
  std::vector<float> gd(n / 256);
  std::vector<std::int16_t> gbs(n / 16);
  g.q.download(gq.data(), n);
  g.d.download(gd.data(), gd.size() * 4);
  g.bsums.download(gbs.data(), gbs.size() * 2);
  std::size_t differ = 0;
  for (std::size_t b = 0; b < n / 256; ++b) {
    trueno::quant::BlockQ8_K blk;
    std::memcpy(&blk, cpu.data() + b * sizeof blk, sizeof blk);
    bool same = std::memcmp(&blk.d, &gd[b], 4) == 0;
    for (int i = 0; i < 256; ++i) same = same && blk.qs[i] == gq[b * 256 + i];
    for (int s = 0; s < 16; ++s) same = same && blk.bsums[s] == gbs[b * 16 + s];
    differ += !same;
  }
  return differ;
}

// Inputs with the cases the quantizer decides: a zero block, a tie in magnitude with opposite signs (the
// first wins), a winner in the last warp.
std::vector<float> activations(std::size_t n) {
  auto x = trueno::test::random_normal(n, rng(), 1.0f);
  for (std::size_t i = 256; i < 512 && n >= 1024; ++i) x[i] = 0.0f;
  x[9] = 5.0f, x[200] = -5.0f;
  if (n >= 1024) x[1023] = -7.5f;
  return x;
}

bool has_storage(const trueno::vulkan::DeviceInfo& info) { return info.int64 && info.storage_16bit && info.storage_8bit; }

TEST(DecyVulkanGpu, ProjectQuantizeQ8KMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!has_storage(context().info())) GTEST_SKIP() << "skipped: the device lacks shaderInt64, 8- or 16-bit storage";
  for (const std::size_t n : {256u, 4096u, 14336u}) {
    const auto x = activations(n);
    Buffer bx = upload(x);
    Q8Arrays g(n);
    Recorder rec(context());
    rec.dispatch(pipeline("quantize_q8_k_quantize_q8_k", 4, 0), {&bx, &g.q, &g.d, &g.bsums}, static_cast<const void*>(nullptr), 0, n / 256);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "quantize_q8_k", {static_cast<float>(blocks_differing(x, g))}, {0.0f},
                                      "blocks differing, n = " + std::to_string(n));
  }
}

// rmsnorm_quantize: xn = rmsnorm(x) * w (each block sums the whole row's squares itself), then xn -> Q8_K;
// swiglu_quantize: g = silu(g) * u in place, then g -> Q8_K. The blocks are checked against the CPU's
// quantize of the GPU's own f32 output (the f32 step has its own bound).
TEST(DecyVulkanGpu, ProjectFusedQuantizeMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!has_storage(context().info())) GTEST_SKIP() << "skipped: the device lacks shaderInt64, 8- or 16-bit storage";
  for (const std::size_t n : {4096u, 11008u - 11008u % 256u}) {
    const auto x = activations(n), w = trueno::test::random_normal(n, rng(), 1.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
    const std::string shape = "n = " + std::to_string(n);
    {
      std::vector<float> want(n);
      trueno::ops::rmsnorm(x, w, 1e-6f, want);
      Buffer bx = upload(x), bw = upload(w), bxn(context(), n * 4);
      Q8Arrays g(n);
      const struct {
        float eps;
        std::int32_t n;
      } push{1e-6f, static_cast<std::int32_t>(n)};
      Recorder rec(context());
      rec.dispatch(pipeline("fused_ops_rmsnorm_quantize", 6, 8), {&bx, &bw, &bxn, &g.q, &g.d, &g.bsums}, push, n / 256);
      rec.submit();
      const auto xn = download(bxn, n);
      trueno::test::expect_gpu_contract("decy", "fused_ops_rmsnorm_quantize", xn, want, "xn, " + shape);
      trueno::test::expect_gpu_contract("decy", "fused_ops_rmsnorm_quantize", {static_cast<float>(blocks_differing(xn, g))}, {0.0f},
                                        "blocks differing, " + shape, 1);
    }
    {
      std::vector<float> want(n);
      trueno::ops::swiglu(x, u, want);
      Buffer bg = upload(x), bu = upload(u);
      Q8Arrays g(n);
      Recorder rec(context());
      rec.dispatch(pipeline("fused_ops_swiglu_quantize", 5, 0), {&bg, &bu, &g.q, &g.d, &g.bsums}, static_cast<const void*>(nullptr), 0, n / 256);
      rec.submit();
      const auto out = download(bg, n);
      trueno::test::expect_gpu_contract("decy", "fused_ops_swiglu_quantize", out, want, "g, " + shape);
      trueno::test::expect_gpu_contract("decy", "fused_ops_swiglu_quantize", {static_cast<float>(blocks_differing(out, g))}, {0.0f},
                                        "blocks differing, " + shape, 1);
    }
  }
}

#else
TEST(DecyVulkanGpu, QuantizeNeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
