// The Vulkan prefill GEMM (Note [Vulkan prefill GEMM], ops.cpp) against the CPU's products, every weight
// type, with partial tiles of rows and tokens, and accumulating (label gpu; lavapipe in CI).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "trueno/ops.h"
#include "trueno/quant.h"
#include "trueno/vulkan/ops.h"
#include "vulkan/vulkan_test_support.h"

namespace trueno::vulkan {
namespace {

using namespace testing;

// Every weight type through one GEMM path against the CPU's products.
void check_every_type(Context& c, std::mt19937_64& rng, const std::string& shader) {
  for (QuantType type : kQuantTypes) {
    if (!gemv_supports(type)) continue;
    const std::size_t block = quant_info(type).block_elems;
    // 260 rows and 150 tokens: whole and partial 64 x 64 tiles of both (tensor cores: whole and partial
    // 16 x 16 blocks); 2 steps of k-quant blocks or 9 of 32-blocks.
    const std::size_t rows = 260, cols = block == 256 ? 512 : 288, T = 150;
    const auto w = quantized(type, random_vector(rows * cols, rng, 0.05f), rows, cols);
    const auto x = random_vector(T * cols, rng);
    std::vector<float> x_cpu = x;  // F16 weights multiply f16-rounded activations (as realizar's CPU pass)
    if (type == QuantType::F16) {
      std::vector<std::uint16_t> h(x.size());
      ops::f32_to_f16(x, h);
      ops::f16_to_f32(h, x_cpu);
    }
    const auto y0 = random_vector(T * rows, rng);
    std::vector<float> want(T * rows);
    for (std::size_t t = 0; t < T; ++t)
      quant_matvec(type, w, rows, cols, std::span(x_cpu).subspan(t * cols, cols), std::span(want).subspan(t * rows, rows));
    for (const bool accumulate : {false, true}) {
      Buffer dw = to_device(w), dx = to_device(x), dy = to_device(y0);
      Recorder rec(c);
      gemm(rec, type, dw, rows, cols, dx, T, dy, accumulate);
      rec.submit();
      std::vector<float> expect = want;
      if (accumulate)
        for (std::size_t i = 0; i < expect.size(); ++i) expect[i] += y0[i];
      expect_contract(shader + std::string(quant_info(type).name), from_device(dy, T * rows), expect,
                      std::to_string(rows) + "x" + std::to_string(cols) + " T=" + std::to_string(T) + (accumulate ? " accumulate" : ""));
    }
  }
}

// Both paths where the device has both: f32 tiles (gemm.comp) and f16 tiles on tensor cores
// (gemm_coopmat.comp, NV cooperative matrices; not on lavapipe, a visible note there).
TEST(VulkanGpu, GemmOfEveryWeightTypeMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 21);
  const bool coopmat = c.coopmat_gemm();
  if (!coopmat) std::printf("note: %s has no NV cooperative matrices: only the f32 GEMM is checked here\n", c.info().name.c_str());
  c.set_coopmat_gemm(false);
  ASSERT_FALSE(gemm_on_tensor_cores(c));
  check_every_type(c, rng, "gemm_");
  if (coopmat) {
    c.set_coopmat_gemm(true);
    ASSERT_EQ(gemm_on_tensor_cores(c), c.info().subgroup_size == 32);
    check_every_type(c, rng, gemm_on_tensor_cores(c) ? "gemm_coopmat_" : "gemm_");
  }
  Buffer w(c, 4096), x(c, 4096), y(c, 4096);
  Recorder rec(c);
  EXPECT_THROW(gemm(rec, QuantType::F32, w, 4, 40, x, 2, y), ShapeError);  // 40 columns: not a multiple of 32
  EXPECT_THROW(gemm(rec, QuantType::Q8_0, w, 64, 256, x, 2, y), ShapeError);  // W too small
}

}  // namespace
}  // namespace trueno::vulkan
