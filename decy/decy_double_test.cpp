// Kernels with double through decy (Note [Double math], decy/glsl_support.cpp): decy's double exp, log, pow,
// sin and cos against std:: in ULPs (testdata/double_math.cu); the project's temperature_draw (sums in
// double, --warp32) against the CPU's draw; grad_rope_rows (its angle in double) against trueno::grad::rope.
// Under contracts/gpu/decy.yaml; a visible skip on a device without shaderFloat64.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "support/temperature_draw_reference.h"
#include "trueno/grad.h"
#include "trueno/ops.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

#define DECY_REQUIRE_FLOAT64()                                                                                   \
  do {                                                                                                           \
    DECY_REQUIRE_VULKAN_DEVICE();                                                                                \
    if (!context().info().float64) GTEST_SKIP() << "skipped: the device lacks shaderFloat64 (" << context().info().name << ")"; \
  } while (0)

Buffer upload_doubles(const std::vector<double>& v) {
  Buffer b(context(), v.size() * 8);
  b.upload(v.data(), v.size() * 8);
  return b;
}

// The distance in ULPs of two doubles (0 for two NaNs; huge for one NaN).
std::uint64_t ulps(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  const auto ordered = [](double d) {
    const auto u = std::bit_cast<std::int64_t>(d);
    return u < 0 ? INT64_MIN - u : u;
  };
  const std::int64_t x = ordered(a), y = ordered(b);
  return x > y ? static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y) : static_cast<std::uint64_t>(y) - static_cast<std::uint64_t>(x);
}

TEST(DecyVulkanGpu, DoubleMathIsCsWithinItsUlpBounds) {
  DECY_REQUIRE_FLOAT64();
  // x: moderate values (every function in range), magnitudes from 1e-300 to 1e300 (exp's overflow and
  // underflow, log's range, sin/cos beyond their reduction's 1.6e6 are not checked), negatives; y: powers.
  std::vector<double> x, y;
  std::uniform_real_distribution<double> mid(-40.0, 40.0), exponent(-300.0, 300.0), power(-3.0, 3.0);
  for (int i = 0; i < 2000; ++i) x.push_back(mid(rng())), y.push_back(power(rng()));
  for (int i = 0; i < 1000; ++i) x.push_back(std::pow(10.0, exponent(rng()))), y.push_back(power(rng()) / 8.0);
  for (int i = 0; i < 500; ++i) x.push_back(std::uniform_real_distribution<double>(-1.5e6, 1.5e6)(rng())), y.push_back(std::round(power(rng())));
  // 709.5 and 709.78271289338397: exp's last finite values (C's; decy's returned infinity above 709 once, seed 820907207)
  const double special[] = {0.0,   -0.0,    1.0,   2.0,    -2.0,    0.5,   700.0, 709.5, 709.78271289338397, -700.0, -745.0, 1e-310,
                            10000.0, 1.5707963267948966, 3.141592653589793};
  for (double s : special) x.push_back(s), y.push_back(-0.75);
  x.push_back(-2.0), y.push_back(3.0);   // a negative base, odd integer power: -8
  x.push_back(-2.0), y.push_back(0.5);   // a negative base, fractional power: NaN
  x.push_back(0.0), y.push_back(2.0);    // 0^2 = 0
  x.push_back(5.0), y.push_back(0.0);    // x^0 = 1
  const int n = static_cast<int>(x.size());
  Buffer bx = upload_doubles(x), by = upload_doubles(y), bo(context(), 5 * x.size() * 8);
  static const std::uint32_t spec[1] = {64};
  const Pipeline& p = context().pipeline_from_spirv("double_math", spirv("double_math"), 3, 4, spec);
  Recorder rec(context());
  rec.dispatch(p, {&bx, &by, &bo}, n, static_cast<std::uint32_t>((n + 63) / 64));
  rec.submit();
  std::vector<double> out(5 * x.size());
  bo.download(out.data(), out.size() * 8);
  const char* names[5] = {"exp", "log", "pow", "sin", "cos"};
  const YAML::Node obligations = trueno::test::gpu_contract_of("decy", "double_math")["obligations"];
  for (int f = 0; f < 5; ++f) {
    std::uint64_t worst = 0;
    std::size_t checked = 0;
    double worst_x = 0;
    for (int i = 0; i < n; ++i) {
      const double v = x[i];
      double want = 0;
      switch (f) {
        case 0: want = std::exp(v); break;
        case 1: want = std::log(v); break;
        case 2:
          want = std::pow(v, y[i]);
          if (v > 0 && std::fabs(y[i] * std::log(v)) > 700.0) continue;  // near overflow: not compared (the bound grows with |y ln b|)
          break;
        case 3: want = std::sin(v); break;
        case 4: want = std::cos(v); break;
      }
      if (f >= 3 && std::fabs(v) > 1.6e6) continue;  // beyond the reduction's exact range (Note [Double math])
      if (f == 0 && v < -708.0) continue;            // subnormal results: fewer bits, not an ULP measure
      const std::uint64_t d = ulps(out[5 * i + f], want);
      ++checked;
      if (d > worst) worst = d, worst_x = v;
    }
    const auto bound = obligations[f]["max_ulp"].as<std::uint64_t>();
    std::printf("double_math %s: %zu values, worst %llu ULP (x = %.17g), bound %llu\n", names[f], checked, static_cast<unsigned long long>(worst),
                worst_x, static_cast<unsigned long long>(bound));
    EXPECT_LE(worst, bound) << names[f] << " at x = " << worst_x;
  }
}

TEST(DecyVulkanGpu, ProjectTemperatureDrawIsTheCpuDraw) {
  DECY_REQUIRE_FLOAT64();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device lacks shaderInt64";
  static const std::uint32_t spec[1] = {256};
  const Pipeline& p = context().pipeline_from_spirv("sample_ops_temperature_draw_warp32", spirv("sample_ops_temperature_draw_warp32"), 4, 16, spec);
  std::vector<float> gpu, cpu;
  std::uniform_real_distribution<double> any(0.0, 1.0);
  const auto draw = [&](const std::vector<float>& x, float inv_t, double u, std::vector<float>* weights) {
    Buffer bx = upload(x), bw(context(), x.size() * 4), bs(context(), (x.size() + 255) / 256 * 8), bo(context(), 4);
    const struct {
      std::int32_t n;
      float inv_t;
      double u;
    } push{static_cast<std::int32_t>(x.size()), inv_t, u};
    Recorder rec(context());
    rec.dispatch(p, {&bx, &bw, &bs, &bo}, push, 1);
    rec.submit();
    std::int32_t id = -2;
    bo.download(&id, 4);
    if (weights != nullptr) *weights = download(bw, x.size());
    return id;
  };
  for (const std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{257}, std::size_t{32000}}) {
    auto x = trueno::test::random_normal(n, rng(), 4.0f);
    if (n > 300) x[n / 3] = -std::numeric_limits<float>::infinity(), x[n / 2] = 40.0f;  // an impossible token; one far ahead
    for (const float inv_t : {1.0f, 1.0f / 0.7f, 0.4f}) {
      const std::vector<float> w = trueno::test::draw_weights(x, inv_t);
      std::vector<float> weights;
      for (int k = 0; k < 6; ++k) {
        const double u = k == 0 ? 0.0 : k == 1 ? std::nextafter(1.0, 0.0) : any(rng());
        const int id = draw(x, inv_t, u, k == 0 ? &weights : nullptr);
        gpu.push_back(static_cast<float>(id)), cpu.push_back(static_cast<float>(trueno::test::draw(w, u)));
        EXPECT_EQ(gpu.back(), cpu.back()) << "n " << n << ", 1/T " << inv_t << ", u " << u;
      }
      trueno::test::expect_gpu_contract("decy", "sample_ops_temperature_draw", weights, w,
                                        "weights, n = " + std::to_string(n) + ", 1/T = " + std::to_string(inv_t), 1);
    }
  }
  EXPECT_EQ(draw({1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f}, 1.0f, 0.5, nullptr), -1) << "a NaN logit is reported, not drawn over";
  trueno::test::expect_gpu_contract("decy", "sample_ops_temperature_draw", gpu, cpu, "drawn ids");
}

// grad_rope_rows: rows of heads at positions pos + row, against trueno::grad::rope per row (neox and not,
// a partial rope_dim).
TEST(DecyVulkanGpu, ProjectGradRopeMatchesTheCpu) {
  DECY_REQUIRE_FLOAT64();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device lacks shaderInt64";
  static const std::uint32_t spec[1] = {256};
  const Pipeline& p = context().pipeline_from_spirv("grad_ops_grad_rope_rows", spirv("grad_ops_grad_rope_rows"), 2, 28, spec);
  const std::uint32_t rows = 5, heads = 4, head_dim = 64, pos = 3000;
  for (const std::uint32_t rope_dim : {64u, 48u})
    for (const int neox : {0, 1}) {
      const auto dy = trueno::test::random_normal(rows * heads * head_dim, rng(), 1.0f);
      std::vector<float> want(dy.size());
      for (std::uint32_t r = 0; r < rows; ++r)
        trueno::grad::rope(std::span(dy).subspan(r * heads * head_dim, heads * head_dim), heads, head_dim, rope_dim, pos + r, 10000.0f, neox != 0,
                           std::span(want).subspan(r * heads * head_dim, heads * head_dim));
      Buffer bdy = upload(dy), bdx(context(), dy.size() * 4);
      const struct {
        std::uint32_t rows, heads, head_dim, rope_dim, pos;
        float base;
        std::int32_t neox;
      } push{rows, heads, head_dim, rope_dim, pos, 10000.0f, neox};
      const std::uint32_t threads = rows * heads * (rope_dim / 2 + head_dim - rope_dim);
      Recorder rec(context());
      rec.dispatch(p, {&bdy, &bdx}, push, (threads + 255) / 256);
      rec.submit();
      trueno::test::expect_gpu_contract("decy", "grad_ops_grad_rope_rows", download(bdx, dy.size()), want,
                                        "5 rows x 4 heads of 64, rope_dim " + std::to_string(rope_dim) + (neox ? ", neox" : ""));
    }
}

#else
TEST(DecyVulkanGpu, DoubleNeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
