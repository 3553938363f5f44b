// The project's backward-op kernels (src/cuda/kernels/grad_ops.cu: the device training step, issue 22)
// translated by decy at build time (decy/CMakeLists.txt) and run on a Vulkan device (lavapipe in CI)
// against the formulas of src/grad/grad.cpp in f64, under contracts/gpu/decy.yaml. The row kernels reduce
// with block_reduce (a warp of 32): they run as translated with --warp32, 256 threads per block as their
// launchers use. A visible skip without a Vulkan device or 64-bit integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

#define DECY_REQUIRE_INT64()                                                                                           \
  do {                                                                                                                 \
    DECY_REQUIRE_VULKAN_DEVICE();                                                                                      \
    if (!context().info().int64) GTEST_SKIP() << "skipped: the device lacks shaderInt64 (the kernels' u64 row offsets)"; \
  } while (0)

// grad_ops_<kernel>, or its --warp32 build, with `block` threads per workgroup.
const Pipeline& pipeline(const std::string& kernel, bool warp32, std::uint32_t buffers, std::uint32_t push_bytes, std::uint32_t block) {
  const std::string name = "grad_ops_" + kernel + (warp32 ? "_warp32" : "");
  const std::uint32_t spec[1] = {block};
  return context().pipeline_from_spirv(name, spirv(name), buffers, push_bytes, spec);
}

std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

Buffer upload_ints(const std::vector<std::int32_t>& v) {
  Buffer b(context(), v.size() * 4);
  b.upload(v.data(), v.size() * 4);
  return b;
}

// The norms' row statistics (mean, 1 / sqrt(var + eps)) in f64, mean 0 for rmsnorm.
std::vector<double> norm_stats(const std::vector<float>& x, std::size_t n, std::size_t rows, double eps, bool layer) {
  std::vector<double> st(2 * rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, s = 0;
    if (layer) {
      for (std::size_t i = 0; i < n; ++i) mean += x[r * n + i];
      mean /= static_cast<double>(n);
    }
    for (std::size_t i = 0; i < n; ++i) s += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    st[2 * r] = mean, st[2 * r + 1] = 1.0 / std::sqrt(s / static_cast<double>(n) + eps);
  }
  return st;
}

// grad_norm_stats_rows, grad_norm_dx_rows and grad_norm_params_cols for rmsnorm and layernorm: rows of 300
// and 37 (more and fewer values than threads). dx and the parameter gradients take the CPU's statistics
// (rounded to f32, as the device would hold them), so each kernel is checked alone.
TEST(DecyVulkanGpu, ProjectNormBackwardMatchesTheCpu) {
  DECY_REQUIRE_INT64();
  const std::uint32_t rows = 5;
  const float eps = 1e-5f;
  for (const std::uint32_t n : {300u, 37u}) {
    for (const int layer : {0, 1}) {
      const std::string how = std::to_string(rows) + " x " + std::to_string(n) + (layer ? " layernorm" : " rmsnorm");
      const auto x = trueno::test::random_normal(rows * n, rng(), 1.5f), w = trueno::test::random_normal(n, rng(), 1.0f);
      const auto dy = trueno::test::random_normal(rows * n, rng(), 1.0f);
      const std::vector<double> st = norm_stats(x, n, rows, eps, layer != 0);
      const std::vector<float> stf = to_float(st);
      Buffer bx = upload(x), bw = upload(w), bdy = upload(dy), bst = upload(stf), bs(context(), rows * 8);
      {
        struct {
          std::uint32_t n, rows;
          float eps;
          std::int32_t layer;
        } push{n, rows, eps, layer};
        Recorder rec(context());
        rec.dispatch(pipeline("grad_norm_stats_rows", true, 2, 16, 256), {&bx, &bs}, push, rows);
        rec.submit();
        trueno::test::expect_gpu_contract("decy", "grad_ops_grad_norm_stats_rows", download(bs, 2 * rows), stf, how);
      }
      {
        std::vector<double> want(rows * n);
        for (std::size_t r = 0; r < rows; ++r) {
          const double mean = stf[2 * r], rr = stf[2 * r + 1];
          double sg = 0, sgx = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const double g = double{dy[r * n + i]} * w[i], xi = x[r * n + i];
            sg += g, sgx += layer ? g * ((xi - mean) * rr) : g * xi;
          }
          for (std::size_t i = 0; i < n; ++i) {
            const double g = double{dy[r * n + i]} * w[i], xi = x[r * n + i];
            want[r * n + i] = layer ? rr * (g - sg / n - (xi - mean) * rr * (sgx / n)) : rr * g - rr * rr * rr * sgx / n * xi;
          }
        }
        struct {
          std::uint32_t n, rows;
          std::int32_t layer;
        } push{n, rows, layer};
        Buffer bdx(context(), rows * n * 4);
        Recorder rec(context());
        rec.dispatch(pipeline("grad_norm_dx_rows", true, 5, 12, 256), {&bx, &bw, &bdy, &bst, &bdx}, push, rows);
        rec.submit();
        trueno::test::expect_gpu_contract("decy", "grad_ops_grad_norm_dx_rows", download(bdx, rows * n), to_float(want), how);
      }
      for (const int accumulate : {0, 1}) {
        const auto dw0 = trueno::test::random_normal(n, rng(), 1.0f), db0 = trueno::test::random_normal(n, rng(), 1.0f);
        std::vector<double> dw(n), db(n);
        for (std::size_t j = 0; j < n; ++j) {
          dw[j] = accumulate ? dw0[j] : 0.0, db[j] = accumulate && layer ? db0[j] : 0.0;
          for (std::size_t r = 0; r < rows; ++r) {
            const double d = dy[r * n + j], xi = x[r * n + j];
            dw[j] += layer ? d * ((xi - stf[2 * r]) * stf[2 * r + 1]) : d * xi * stf[2 * r + 1];
            db[j] += d;
          }
          if (!layer) db[j] = db0[j];  // rmsnorm has no bias: db is left as it was
        }
        struct {
          std::uint32_t n, rows;
          std::int32_t layer, accumulate;
        } push{n, rows, layer, accumulate};
        Buffer bdw = upload(dw0), bdb = upload(db0);
        Recorder rec(context());
        rec.dispatch(pipeline("grad_norm_params_cols", false, 5, 16, 64), {&bx, &bdy, &bst, &bdw, &bdb}, push, (n + 63) / 64);
        rec.submit();
        const std::string what = how + (accumulate ? ", accumulating" : "");
        trueno::test::expect_gpu_contract("decy", "grad_ops_grad_norm_params_cols", download(bdw, n), to_float(dw), what + ", dw");
        trueno::test::expect_gpu_contract("decy", "grad_ops_grad_norm_params_cols", download(bdb, n), to_float(db), what + ", db");
      }
    }
  }
}

// grad_cross_entropy_rows: 6 rows of 1000 classes, the last row's target outside them (its loss NaN).
TEST(DecyVulkanGpu, ProjectCrossEntropyBackwardMatchesTheCpu) {
  DECY_REQUIRE_INT64();
  const std::uint32_t n = 1000, rows = 6;
  const float scale = 1.0f / rows;
  const auto logits = trueno::test::random_normal(rows * n, rng(), 3.0f);
  std::vector<std::int32_t> targets(rows);
  for (std::uint32_t r = 0; r < rows; ++r) targets[r] = static_cast<std::int32_t>((r * 389 + 17) % n);
  targets[rows - 1] = -1;
  std::vector<double> dl(rows * n), loss(rows - 1);
  for (std::uint32_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (std::uint32_t i = 0; i < n; ++i) m = std::max(m, double{logits[r * n + i]});
    for (std::uint32_t i = 0; i < n; ++i) s += std::exp(logits[r * n + i] - m);
    for (std::uint32_t i = 0; i < n; ++i) {
      const double ls = logits[r * n + i] - m - std::log(s);
      dl[r * n + i] = scale * (std::exp(ls) - (static_cast<std::int32_t>(i) == targets[r] ? 1.0 : 0.0));
      if (static_cast<std::int32_t>(i) == targets[r]) loss[r] = -ls;
    }
  }
  Buffer bl = upload(logits), bt = upload_ints(targets), bd(context(), rows * n * 4), bloss(context(), rows * 4);
  struct {
    std::uint32_t n, rows;
    float scale;
  } push{n, rows, scale};
  Recorder rec(context());
  rec.dispatch(pipeline("grad_cross_entropy_rows", true, 4, 12, 256), {&bl, &bt, &bd, &bloss}, push, rows);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_cross_entropy_rows", download(bd, rows * n), to_float(dl), "6 x 1000, dlogits");
  std::vector<float> got = download(bloss, rows);
  EXPECT_TRUE(std::isnan(got.back())) << "a target outside the classes gives a NaN loss, got " << got.back();
  got.pop_back();
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_cross_entropy_rows", got, to_float(loss), "6 x 1000, loss");
}

// grad_causal_softmax_rows: row t is the softmax of scale * s[t][0..t], zeros after; rows 0-69 of 70
// (the first rows shorter than a warp, the last longer than the block's 256 threads: n = 300).
TEST(DecyVulkanGpu, ProjectCausalSoftmaxMatchesTheCpu) {
  DECY_REQUIRE_INT64();
  const std::uint32_t n = 300, rows = 70;
  const float scale = 0.125f;
  const auto s = trueno::test::random_normal(rows * n, rng(), 4.0f);
  std::vector<double> p(rows * n, 0.0);
  for (std::uint32_t t = 0; t < rows; ++t) {
    double m = -INFINITY, sum = 0;
    for (std::uint32_t i = 0; i <= t; ++i) m = std::max(m, double{s[t * n + i] * scale});
    for (std::uint32_t i = 0; i <= t; ++i) sum += std::exp(double{s[t * n + i] * scale} - m);
    for (std::uint32_t i = 0; i <= t; ++i) p[t * n + i] = std::exp(double{s[t * n + i] * scale} - m) / sum;
  }
  Buffer bs = upload(s), bp(context(), rows * n * 4);
  struct {
    std::uint32_t n, rows;
    float scale;
  } push{n, rows, scale};
  Recorder rec(context());
  rec.dispatch(pipeline("grad_causal_softmax_rows", true, 2, 12, 256), {&bs, &bp}, push, rows);
  rec.submit();
  const std::vector<float> got = download(bp, rows * n);
  std::size_t nonzero_after = 0;
  for (std::uint32_t t = 0; t < rows; ++t)
    for (std::uint32_t i = t + 1; i < n; ++i) nonzero_after += got[t * n + i] != 0.0f;
  EXPECT_EQ(nonzero_after, 0u) << "the positions after each row's token must be exactly 0";
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_causal_softmax_rows", got, to_float(p), "70 rows of 300");
}

// grad_embedding_cols (ids outside the table skipped, repeated ids adding in token order) and grad_bias_cols
// (the rows in order, __fadd_rn): float additions in the kernels' order, so every bit is the CPU's.
TEST(DecyVulkanGpu, ProjectEmbeddingAndBiasGradientsMatchTheCpu) {
  DECY_REQUIRE_INT64();
  const std::uint32_t tokens = 9, dim = 100, table_rows = 6;
  const std::vector<std::int32_t> ids = {3, 0, 3, 5, -2, 6, 1, 3, 5};  // -2 and 6 are outside the table
  const auto dy = trueno::test::random_normal(tokens * dim, rng(), 1.0f);
  for (const int accumulate : {0, 1}) {
    const auto table0 = trueno::test::random_normal(table_rows * dim, rng(), 1.0f);
    std::vector<float> want = accumulate ? table0 : std::vector<float>(table0.size(), 0.0f);
    for (std::uint32_t t = 0; t < tokens; ++t)
      if (ids[t] >= 0 && static_cast<std::uint32_t>(ids[t]) < table_rows)
        for (std::uint32_t j = 0; j < dim; ++j) want[ids[t] * dim + j] += dy[t * dim + j];
    Buffer bi = upload_ints(ids), bdy = upload(dy), btab = upload(table0);
    struct {
      std::uint32_t tokens, dim, rows;
      std::int32_t accumulate;
    } push{tokens, dim, table_rows, accumulate};
    Recorder rec(context());
    rec.dispatch(pipeline("grad_embedding_cols", false, 3, 16, 64), {&bi, &bdy, &btab}, push, (dim + 63) / 64);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "grad_ops_grad_embedding_cols", download(btab, table_rows * dim), want,
                                      accumulate ? "accumulating" : "zeroed first");
  }
  for (const int accumulate : {0, 1}) {
    const std::uint32_t n = 130, rows = 11;
    const auto g = trueno::test::random_normal(rows * n, rng(), 1.0f), db0 = trueno::test::random_normal(n, rng(), 1.0f);
    std::vector<float> want(n);
    for (std::uint32_t j = 0; j < n; ++j) {
      float s = accumulate ? db0[j] : 0.0f;
      for (std::uint32_t r = 0; r < rows; ++r) s += g[r * n + j];
      want[j] = s;
    }
    Buffer bg = upload(g), bdb = upload(db0);
    struct {
      std::uint32_t n, rows;
      std::int32_t accumulate;
    } push{n, rows, accumulate};
    Recorder rec(context());
    rec.dispatch(pipeline("grad_bias_cols", false, 2, 12, 64), {&bg, &bdb}, push, (n + 63) / 64);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "grad_ops_grad_bias_cols", download(bdb, n), want, accumulate ? "accumulating" : "fresh");
  }
}

// grad_adamw: one step over 1000 values (3 workgroups of 64: the grid-stride loop turns), w, m and v
// against the formula in f64.
TEST(DecyVulkanGpu, ProjectAdamwMatchesTheCpu) {
  DECY_REQUIRE_INT64();
  const std::uint32_t n = 1000;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f, c1 = 1.0f - 0.9f * 0.9f, c2 = 1.0f - 0.999f * 0.999f;
  const auto w = trueno::test::random_normal(n, rng(), 1.0f), g = trueno::test::random_normal(n, rng(), 0.1f);
  auto m = trueno::test::random_normal(n, rng(), 0.01f), v = trueno::test::random_normal(n, rng(), 0.001f);
  for (float& x : v) x = std::fabs(x);
  std::vector<double> w1(n), m1(n), v1(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    m1[i] = double{b1} * m[i] + (1.0 - double{b1}) * g[i];
    v1[i] = double{b2} * v[i] + (1.0 - double{b2}) * g[i] * g[i];
    w1[i] = w[i] - double{lr} * ((m1[i] / c1) / (std::sqrt(v1[i] / c2) + eps) + double{wd} * w[i]);
  }
  Buffer bw = upload(w), bg = upload(g), bm = upload(m), bv = upload(v);
  struct {
    std::uint32_t n;
    float lr, beta1, beta2, eps, wd, c1, c2;
  } push{n, lr, b1, b2, eps, wd, c1, c2};
  Recorder rec(context());
  rec.dispatch(pipeline("grad_adamw", false, 4, 32, 64), {&bw, &bg, &bm, &bv}, push, 3);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_adamw", download(bw, n), to_float(w1), "w");
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_adamw", download(bm, n), to_float(m1), "m");
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_adamw", download(bv, n), to_float(v1), "v");
}

#else
TEST(DecyVulkanGpu, TrainingKernelsNeedTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
