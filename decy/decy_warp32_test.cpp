// The project's kernels that assume a warp of 32 lanes, translated with decy --warp32 (Note [Emulated
// warps], decy/glsl_support.cpp: shuffles through shared memory between barriers) so that they run on
// lavapipe's subgroups of 8: tensor_ops' block reductions, amax_f32/_f16, layer_ops' rmsnorm, greedy's argmax
// passes and prefill's softmax_causal, against
// CPU references under contracts/gpu/decy.yaml. 256 threads per block, as their launchers use.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

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


// tensor_reduce: sum (op 0), max (1), dot (2) in two launches: 5 blocks of partials, then one block.
TEST(DecyVulkanGpu, ProjectTensorReduceMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const std::uint32_t n = 5000, groups = 5;
  // Mean 1, not 0, as check_reductions (tests/support/device_ops_cases.h) draws them: a sum or dot of
  // zero-mean values can cancel to near 0, and the contract bounds the one value's relative error (seed
  // 397246023 drew such a dot: nmse 1.4e-9 on lavapipe against 1e-9, with both sides summing correctly).
  auto x = trueno::test::random_normal(n, rng(), 1.0f), y = trueno::test::random_normal(n, rng(), 1.0f);
  for (std::uint32_t i = 0; i < n; ++i) x[i] += 1.0f, y[i] += 1.0f;
  for (int op = 0; op < 3; ++op) {
    double want = op == 1 ? -INFINITY : 0.0;
    for (std::uint32_t i = 0; i < n; ++i) want = op == 0 ? want + x[i] : op == 1 ? std::max(want, double{x[i]}) : want + double{x[i]} * y[i];
    Buffer bx = upload(x), by = upload(y), bp(context(), groups * 4), bo(context(), 4);
    const Pipeline& p = pipeline("tensor_ops_tensor_reduce", 4, 16);
    Recorder rec(context());
    const std::uint32_t push0[4] = {n, static_cast<std::uint32_t>(op), 0, groups}, push1[4] = {n, static_cast<std::uint32_t>(op), 1, groups};
    rec.dispatch(p, {&bx, &by, &bp, &bo}, push0, groups);
    rec.dispatch(p, {&bx, &by, &bp, &bo}, push1, 1);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_reduce", download(bo, 1), {static_cast<float>(want)},
                                      std::string(op == 0 ? "sum" : op == 1 ? "max" : "dot") + " of 5000", op == 1 ? 1 : 0);
  }
}

struct Rows {
  std::uint32_t n, rows;
  float eps;
};

// softmax, rmsnorm, layernorm and softmax's backward over rows of n (one block per row), against trueno::ops
// (the backward in f64).
TEST(DecyVulkanGpu, ProjectTensorRowOpsMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const std::uint32_t n = 700, rows = 3;
  const float eps = 1e-5f;
  const auto x = trueno::test::random_normal(n * rows, rng(), 2.0f), w = trueno::test::random_normal(n, rng(), 1.0f),
             b = trueno::test::random_normal(n, rng(), 1.0f), dy = trueno::test::random_normal(n * rows, rng(), 1.0f);
  std::vector<float> sm(n * rows), rn(n * rows), ln(n * rows), bw(n * rows);
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::span<const float> xr(x.data() + r * n, n);
    trueno::ops::softmax(xr, std::span(sm).subspan(r * n, n));
    trueno::ops::rmsnorm(xr, w, eps, std::span(rn).subspan(r * n, n));
    trueno::ops::layernorm(xr, w, b, eps, std::span(ln).subspan(r * n, n));
    double s = 0;
    for (std::uint32_t i = 0; i < n; ++i) s += double{dy[r * n + i]} * sm[r * n + i];
    for (std::uint32_t i = 0; i < n; ++i) bw[r * n + i] = static_cast<float>(sm[r * n + i] * (dy[r * n + i] - s));
  }
  const Rows push{n, rows, eps};
  Buffer bx = upload(x), bwt = upload(w), bb = upload(b), bdy = upload(dy), bsm = upload(sm), bo(context(), n * rows * 4);
  const auto run = [&](const char* name, std::initializer_list<const Buffer*> buffers, std::uint32_t push_bytes) {
    Recorder rec(context());
    rec.dispatch(pipeline(name, static_cast<std::uint32_t>(buffers.size()), push_bytes), buffers, &push, push_bytes, rows, 1);
    rec.submit();
    return download(bo, n * rows);
  };
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_softmax_rows", run("tensor_ops_tensor_softmax_rows", {&bx, &bo}, 8), sm, "3 x 700");
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_rmsnorm_rows", run("tensor_ops_tensor_rmsnorm_rows", {&bx, &bwt, &bo}, 12), rn, "3 x 700");
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_layernorm_rows", run("tensor_ops_tensor_layernorm_rows", {&bx, &bwt, &bb, &bo}, 12), ln,
                                    "3 x 700");
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_softmax_backward_rows",
                                    run("tensor_ops_tensor_softmax_backward_rows", {&bsm, &bdy, &bo}, 8), bw, "3 x 700");
}

// layer_ops' rmsnorm (the prelude's block_sum_squares: float4 loads when n % 4 == 0, a warp_sum of
// warp_sums) against trueno::ops::rmsnorm, at n = 4096 (the float4 path) and 1001 (the scalar one).
void check_rmsnorm(const Pipeline& p, const std::string& how) {
  for (const int n : {4096, 1001}) {
    const auto x = trueno::test::random_normal(2 * static_cast<std::size_t>(n), rng(), 1.0f), w = trueno::test::random_normal(n, rng(), 1.0f);
    std::vector<float> want(2 * static_cast<std::size_t>(n));
    for (int r = 0; r < 2; ++r)
      trueno::ops::rmsnorm(std::span(x).subspan(r * n, n), w, 1e-6f, std::span(want).subspan(r * n, n));
    Buffer bx = upload(x), bw = upload(w), bo(context(), want.size() * 4);
    struct {
      float eps;
      std::int32_t n;
    } push{1e-6f, n};
    Recorder rec(context());
    rec.dispatch(p, {&bx, &bw, &bo}, push, 2);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_rmsnorm", download(bo, want.size()), want, "2 x " + std::to_string(n) + how);
  }
}

TEST(DecyVulkanGpu, ProjectRmsnormMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  check_rmsnorm(pipeline("layer_ops_rmsnorm", 3, 8), ", --warp32");
}

// amax_f32 / amax_f16: the largest |x| as float bits, combined across blocks by atomicMax.
TEST(DecyVulkanGpu, ProjectAmaxMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  const std::uint64_t n = 3000;
  const auto x = trueno::test::random_normal(n, rng(), 3.0f);
  std::vector<std::uint16_t> h(n);
  trueno::ops::f32_to_f16(x, h);
  std::vector<float> xh(n);
  trueno::ops::f16_to_f32(h, xh);
  for (const bool f16 : {false, true}) {
    float want = 0;
    for (float v : f16 ? xh : x) want = std::max(want, std::fabs(v));
    Buffer bx(context(), n * 4), bo(context(), 16);
    bx.upload(f16 ? static_cast<const void*>(h.data()) : x.data(), f16 ? n * 2 : n * 4);
    const std::uint32_t zero[4] = {};
    bo.upload(zero, 16);  // the launcher zeroes it first
    Recorder rec(context());
    rec.dispatch(pipeline(f16 ? "fp8_ops_amax_f16" : "fp8_ops_amax_f32", 2, 8), {&bx, &bo}, n, 4);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", f16 ? "fp8_ops_amax_f16" : "fp8_ops_amax_f32", download(bo, 1), {want}, "3000");
    if (f16) continue;
    bo.upload(zero, 16);  // amax_f32_v4: the same 3000 values as 750 vec4
    Recorder rec4(context());
    rec4.dispatch(pipeline("fp8_ops_amax_f32_v4", 2, 8), {&bx, &bo}, n / 4, 3);
    rec4.submit();
    trueno::test::expect_gpu_contract("decy", "fp8_ops_amax_f32_v4", download(bo, 1), {want}, "3000 as 750 vec4");
  }
}

// The FP8 prompt pass's producers (Note [Vector FP8 casts]): rmsnorm_amax (rows normalized as rmsnorm, and
// the largest |value| written) and swiglu_amax (its float4 path at n = 1000, the scalar one at 1001). The
// outputs against trueno::ops; amax against the largest |value| the kernel itself wrote, every bit.
float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

TEST(DecyVulkanGpu, ProjectFp8ProducersMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device lacks shaderInt64";
  const std::uint32_t zero[4] = {};
  for (const int n : {4096, 1001}) {
    const auto x = trueno::test::random_normal(3 * static_cast<std::size_t>(n), rng(), 1.0f), w = trueno::test::random_normal(n, rng(), 1.0f);
    std::vector<float> want(x.size());
    for (int r = 0; r < 3; ++r) trueno::ops::rmsnorm(std::span(x).subspan(r * n, n), w, 1e-6f, std::span(want).subspan(r * n, n));
    Buffer bx = upload(x), bw = upload(w), bo(context(), want.size() * 4), ba(context(), 16);
    ba.upload(zero, 16);
    struct {
      float eps;
      std::int32_t n;
    } push{1e-6f, n};
    Recorder rec(context());
    rec.dispatch(pipeline("fp8_ops_rmsnorm_amax", 4, 8), {&bx, &bw, &bo, &ba}, push, 3);
    rec.submit();
    const std::vector<float> got = download(bo, want.size());
    const std::string how = "3 x " + std::to_string(n);
    trueno::test::expect_gpu_contract("decy", "fp8_ops_rmsnorm_amax", got, want, how);
    trueno::test::expect_gpu_contract("decy", "fp8_ops_rmsnorm_amax", download(ba, 1), {max_abs(got)}, how + ", amax", 1);
  }
  for (const std::uint64_t n : {1000u, 1001u}) {
    const auto g = trueno::test::random_normal(n, rng(), 2.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
    std::vector<float> want(n);
    trueno::ops::swiglu(g, u, want);
    Buffer bg = upload(g), bu = upload(u), ba(context(), 16);
    ba.upload(zero, 16);
    Recorder rec(context());
    rec.dispatch(pipeline("fp8_ops_swiglu_amax", 3, 8), {&bg, &bu, &ba}, n, 2);
    rec.submit();
    const std::vector<float> got = download(bg, n);
    const std::string how = std::to_string(n) + (n % 4 == 0 ? " (float4 path)" : " (scalar path)");
    trueno::test::expect_gpu_contract("decy", "fp8_ops_swiglu_amax", got, want, how);
    trueno::test::expect_gpu_contract("decy", "fp8_ops_swiglu_amax", download(ba, 1), {max_abs(got)}, how + ", amax", 1);
  }
}

// Greedy's two passes (the prelude-style block_max_u64: 64-bit keys through the emulated shuffles, then
// __syncthreads_or): the id of the largest logit, the lower id among equals, and whether any is not finite.
TEST(DecyVulkanGpu, ProjectArgmaxMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device lacks shaderInt64";
  const std::int32_t n = 3000, parts = 3;
  for (const bool with_inf : {false, true}) {
    auto x = trueno::test::random_normal(n, rng(), 1.0f);
    x[100] = x[2000] = 10.0f;  // a tie: the lower id wins
    if (with_inf) x[2500] = INFINITY;
    const std::vector<float> want = {with_inf ? 2500.0f : 100.0f, with_inf ? 1.0f : 0.0f};
    Buffer bx = upload(x), best(context(), parts * 8), bad(context(), parts * 4), out(context(), 8);
    Recorder rec(context());
    rec.dispatch(pipeline("sample_ops_argmax_partial", 3, 4), {&bx, &best, &bad}, n, parts);
    rec.dispatch(pipeline("sample_ops_argmax_final", 4, 4), {&bx, &best, &bad, &out}, parts, 1);
    rec.submit();
    std::int32_t got[2] = {};
    out.download(got, 8);
    trueno::test::expect_gpu_contract("decy", "sample_ops_argmax", {static_cast<float>(got[0]), static_cast<float>(got[1])}, want,
                                      with_inf ? "3000 with +inf" : "3000 with a tie");
  }
}

// prefill's causal softmax to f16: row (head, token) over the positions the token sees, zeros past them.
void check_softmax_causal(const Pipeline& p, const std::string& how) {
  const std::int32_t heads = 2, T = 3, n_keys = 600, pos0 = 400;
  const auto s = trueno::test::random_normal(static_cast<std::size_t>(heads) * T * n_keys, rng(), 3.0f);
  std::vector<float> want(s.size(), 0.0f);
  for (int h = 0; h < heads; ++h)
    for (int t = 0; t < T; ++t) {
      const std::size_t row = (static_cast<std::size_t>(h) * T + t) * n_keys;
      const int n = std::min(n_keys, pos0 + t + 1);
      std::vector<float> p(n);
      trueno::ops::softmax(std::span(s).subspan(row, n), p);
      std::vector<std::uint16_t> p16(n);
      trueno::ops::f32_to_f16(p, p16);
      trueno::ops::f16_to_f32(p16, std::span(want).subspan(row, n));
    }
  Buffer bs = upload(s), bp(context(), (s.size() * 2 + 15) / 16 * 16);
  const std::int32_t push[2] = {n_keys, pos0};
  Recorder rec(context());
  rec.dispatch(p, {&bs, &bp}, push, T, heads);
  rec.submit();
  std::vector<std::uint16_t> h(s.size());
  bp.download(h.data(), h.size() * 2);
  std::vector<float> got(s.size());
  trueno::ops::f16_to_f32(h, got);
  trueno::test::expect_gpu_contract("decy", "prefill_ops_softmax_causal", got, want, "2 heads x 3 tokens x 600 keys" + how);
}

TEST(DecyVulkanGpu, ProjectSoftmaxCausalMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  check_softmax_causal(pipeline("prefill_ops_softmax_causal", 2, 8), ", --warp32");
}

// The same two kernels translated without --warp32: their shuffles as subgroup operations, which is CUDA's
// meaning only where a subgroup has 32 lanes (NVIDIA's Vulkan driver; lavapipe's has 8).
TEST(DecyVulkanGpu, ProjectWarpKernelsOnSubgroupsOf32MatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (info.subgroup_size != 32 || !info.subgroup_arithmetic)
    GTEST_SKIP() << "skipped: the device's subgroups have " << info.subgroup_size << " lanes, CUDA's warps 32 (the --warp32 builds run here)";
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  static const std::uint32_t spec[1] = {256};
  check_rmsnorm(context().pipeline_from_spirv("layer_ops_rmsnorm", spirv("layer_ops_rmsnorm"), 3, 8, spec), ", subgroups");
  check_softmax_causal(context().pipeline_from_spirv("prefill_ops_softmax_causal", spirv("prefill_ops_softmax_causal"), 2, 8, spec),
                       ", subgroups");
}

// The decode attention's three steps (attention.cuh) end to end: attention_scores and attention_weights_v
// (--warp32) on their 16-byte vector path (head sizes 64 and 128, 256 threads: scores_vector<HD> and
// weights_v_vector<HD>, whose shuffles every thread reaches), then attention_combine, against the CPU's
// attention over the same f16 KV cache with q and the weights rounded to f16 (Note [F16 attention]); and
// the same attention in one launch, attention_one_block (--warp32, its vector path one_block_vector<HD>;
// Note [One block per head]).
// (Their element-wise path for other head sizes shuffles inside loops whose trip count differs per warp:
// outside --warp32's precondition, not run.)
TEST(DecyVulkanGpu, ProjectAttentionMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  const auto f16 = [](std::vector<float> v) {
    std::vector<std::uint16_t> h(v.size());
    trueno::ops::f32_to_f16(v, h);
    trueno::ops::f16_to_f32(h, v);
    return v;
  };
  for (const std::int32_t hd : {64, 128}) {
    const std::int32_t n_head = 4, group = 2, kv_row = n_head / group * hd, n_ctx = 200, pos = 150, chunks = 3;  // 151 positions: 3 chunks of 64
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const auto q = trueno::test::random_normal(static_cast<std::size_t>(n_head) * hd, rng(), 1.0f);
    const auto k = f16(trueno::test::random_normal(static_cast<std::size_t>(n_ctx) * kv_row, rng(), 1.0f));
    const auto v = f16(trueno::test::random_normal(static_cast<std::size_t>(n_ctx) * kv_row, rng(), 1.0f));
    const auto q16 = f16(q);
    std::vector<float> want(static_cast<std::size_t>(n_head) * hd);
    for (int h = 0; h < n_head; ++h) {
      const int kvh = h / group;
      std::vector<double> sc(pos + 1);
      double m = -INFINITY, l = 0;
      for (int j = 0; j <= pos; ++j) {
        double dot = 0;
        for (int d = 0; d < hd; ++d) dot += double{k[static_cast<std::size_t>(j) * kv_row + kvh * hd + d]} * q16[h * hd + d];
        sc[j] = static_cast<float>(dot) * scale, m = std::max(m, sc[j]);
      }
      for (double s : sc) l += std::exp(s - m);
      std::vector<float> p;
      for (double s : sc) p.push_back(static_cast<float>(std::exp(s - m) / l));
      p = f16(p);
      for (int d = 0; d < hd; ++d) {
        double acc = 0;
        for (int j = 0; j <= pos; ++j) acc += double{p[j]} * v[static_cast<std::size_t>(j) * kv_row + kvh * hd + d];
        want[h * hd + d] = static_cast<float>(acc);
      }
    }
    std::vector<std::uint16_t> kh(k.size()), vh(v.size());
    trueno::ops::f32_to_f16(k, kh), trueno::ops::f32_to_f16(v, vh);
    Buffer bq = upload(q), bk(context(), kh.size() * 2), bv(context(), vh.size() * 2), bpos(context(), 16);
    bk.upload(kh.data(), kh.size() * 2), bv.upload(vh.data(), vh.size() * 2), bpos.upload(&pos, 4);
    Buffer bs(context(), static_cast<std::size_t>(n_head) * n_ctx * 4), bml(context(), n_head * chunks * 8),
        bo(context(), static_cast<std::size_t>(n_head) * chunks * hd * 4), bout(context(), want.size() * 4);
    struct {
      std::int32_t hd, group, kv_row;
      float scale;
      std::int32_t n_ctx;
    } ps{hd, group, kv_row, scale, n_ctx};
    const std::int32_t pw[4] = {hd, group, kv_row, n_ctx}, pc[2] = {hd, chunks};
    static const std::uint32_t spec[1] = {256};
    const Pipeline& combine = context().pipeline_from_spirv("layer_ops_attention_combine", spirv("layer_ops_attention_combine"), 3, 8, spec);
    Recorder rec(context());
    rec.dispatch(pipeline("layer_ops_attention_scores", 5, 20), {&bq, &bk, &bpos, &bs, &bml}, ps, n_head, chunks);
    rec.dispatch(pipeline("layer_ops_attention_weights_v", 5, 16), {&bv, &bpos, &bs, &bml, &bo}, pw, n_head, chunks);
    rec.dispatch(combine, {&bo, &bpos, &bout}, pc, n_head);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_attention", download(bout, want.size()), want,
                                      "hd " + std::to_string(hd) + ", 4 heads, 151 positions");
    Buffer bone(context(), want.size() * 4);
    const struct {
      std::int32_t hd, group, kv_row;
      float scale;
    } p1{hd, group, kv_row, scale};
    Recorder one(context());
    one.dispatch(pipeline("layer_ops_attention_one_block", 5, 16), {&bq, &bk, &bv, &bpos, &bone}, p1, n_head);
    one.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_attention_one_block", download(bone, want.size()), want,
                                      "hd " + std::to_string(hd) + ", 4 heads, 151 positions, one launch");
  }
}

// layer_ops.cu's 8-bit KV copy (Note [8-bit KV copy]): kv_quantize_q8 (--warp32: a warp's absmax by
// shuffles) against the CPU's quantize(Q8_0) bit for bit, then the split attention over the copy
// (attention_scores_q8, attention_weights_v_q8 with --warp32; attention_combine_wide), and in one pass
// (attention_one_pass_q8, attention_combine_rescaled, --warp32), against the CPU's attention over the
// copy's values: 521 positions, three blocks of 256 positions, nine chunks of 64.
TEST(DecyVulkanGpu, ProjectAttentionOverTheKvCopyMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit || !info.storage_8bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64, 8- or 16-bit storage";
  for (const std::int32_t hd : {64, 128}) {
    const std::int32_t n_head = 4, group = 2, kv_row = n_head / group * hd, n_ctx = 600, pos = 520, n = pos + 1;
    const std::int32_t chunks = (n + 63) / 64, blocks = (chunks + 3) / 4;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const std::string what = "hd " + std::to_string(hd) + ", 4 heads, 521 positions";
    const auto q = trueno::test::random_normal(static_cast<std::size_t>(n_head) * hd, rng(), 1.0f);
    std::vector<std::uint16_t> kh(static_cast<std::size_t>(n_ctx) * kv_row), vh(kh.size());
    trueno::ops::f32_to_f16(trueno::test::random_normal(kh.size(), rng(), 1.0f), kh);
    trueno::ops::f32_to_f16(trueno::test::random_normal(vh.size(), rng(), 0.5f), vh);
    Buffer bk(context(), kh.size() * 2), bv(context(), vh.size() * 2), bpos(context(), 16);
    bk.upload(kh.data(), kh.size() * 2), bv.upload(vh.data(), vh.size() * 2), bpos.upload(&pos, 4);
    Buffer bk8(context(), kh.size()), bv8(context(), vh.size()), bkd(context(), kh.size() / 16), bvd(context(), vh.size() / 16);
    const struct {
      std::int32_t first, count, kv_row, pad;
      std::uint64_t layer_stride;
      std::uint32_t has_pos, pad2;
    } pq{0, n, kv_row, 0, static_cast<std::uint64_t>(n_ctx) * kv_row, 0, 0};
    Recorder quant(context());
    quant.dispatch(pipeline("layer_ops_kv_quantize_q8", 7, 28), {&bk, &bv, &bk8, &bkd, &bv8, &bvd, &bpos}, &pq, 28,
                   static_cast<std::uint32_t>((n * kv_row / 32 + 7) / 8), 2);
    quant.submit();
    // The CPU's Q8_0 blocks of the f16 rows: their bytes, and their values for the reference.
    const std::size_t values = static_cast<std::size_t>(n) * kv_row, nb = values / 32;
    std::vector<float> k(values), v(values);
    for (int which = 0; which < 2; ++which) {
      std::vector<float> f(values);
      trueno::ops::f16_to_f32(std::span(which == 0 ? kh : vh).first(values), f);
      std::vector<std::byte> b(nb * 34);
      trueno::quantize(trueno::QuantType::Q8_0, f, b);
      std::vector<std::int8_t> q8(values);
      std::vector<std::uint16_t> d8(nb);
      (which == 0 ? bk8 : bv8).download(q8.data(), values);
      (which == 0 ? bkd : bvd).download(d8.data(), nb * 2);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < nb; ++i) {
        std::uint16_t d;
        std::memcpy(&d, b.data() + i * 34, 2);
        differ += d != d8[i] || std::memcmp(b.data() + i * 34 + 2, q8.data() + i * 32, 32) != 0;
      }
      trueno::test::expect_gpu_contract("decy", "layer_ops_kv_quantize_q8", {static_cast<float>(differ)}, {0.0f},
                                        what + (which == 0 ? ": K blocks differing" : ": V blocks differing"));
      trueno::dequantize(trueno::QuantRow::view(trueno::QuantType::Q8_0, b, values), which == 0 ? std::span(k) : std::span(v));
    }
    std::vector<float> q16(q.size()), want(q.size());
    {
      std::vector<std::uint16_t> t(q.size());
      trueno::ops::f32_to_f16(q, t), trueno::ops::f16_to_f32(t, q16);
    }
    for (int h = 0; h < n_head; ++h) {
      const int kvh = h / group;
      std::vector<double> sc(n);
      double m = -INFINITY, l = 0;
      for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < hd; ++d) dot += double{k[static_cast<std::size_t>(j) * kv_row + kvh * hd + d]} * q16[h * hd + d];
        sc[j] = static_cast<float>(dot) * scale, m = std::max(m, sc[j]);
      }
      for (double x : sc) l += std::exp(x - m);
      std::vector<float> p, p16(n);
      for (double x : sc) p.push_back(static_cast<float>(std::exp(x - m) / l));
      std::vector<std::uint16_t> t(n);
      trueno::ops::f32_to_f16(p, t), trueno::ops::f16_to_f32(t, p16);
      for (int d = 0; d < hd; ++d) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += double{p16[j]} * v[static_cast<std::size_t>(j) * kv_row + kvh * hd + d];
        want[h * hd + d] = static_cast<float>(acc);
      }
    }
    Buffer bq = upload(q), bs(context(), static_cast<std::size_t>(n_head) * n_ctx * 4), bml(context(), n_head * chunks * 8),
           bo(context(), static_cast<std::size_t>(n_head) * chunks * hd * 4), bout(context(), want.size() * 4);
    const struct {
      std::int32_t hd, group, kv_row;
      float scale;
      std::int32_t n_ctx, grid_chunks;
    } ps{hd, group, kv_row, scale, n_ctx, chunks};
    const std::int32_t pw[5] = {hd, group, kv_row, n_ctx, chunks}, pc[3] = {hd, chunks, 256};
    static const std::uint32_t spec[1] = {256};
    const Pipeline& combine = context().pipeline_from_spirv("layer_ops_attention_combine_wide", spirv("layer_ops_attention_combine_wide"), 3, 12, spec);
    Recorder rec(context());
    rec.dispatch(pipeline("layer_ops_attention_scores_q8", 6, 24), {&bq, &bk8, &bkd, &bpos, &bs, &bml}, ps, n_head, blocks);
    rec.dispatch(pipeline("layer_ops_attention_weights_v_q8", 6, 20), {&bv8, &bvd, &bpos, &bs, &bml, &bo}, pw, n_head, blocks);
    rec.dispatch(combine, {&bo, &bpos, &bout}, pc, n_head);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_attention_q8", download(bout, want.size()), want, what);
    // Note [One pass over the 8-bit copy]: attention_one_pass_q8, then attention_combine_rescaled.
    Buffer bout1(context(), want.size() * 4);
    const struct {
      std::int32_t hd, group, kv_row;
      float scale;
      std::int32_t grid_chunks;
    } p1{hd, group, kv_row, scale, chunks};
    const std::int32_t p2[2] = {hd, chunks};
    Recorder one(context());
    one.dispatch(pipeline("layer_ops_attention_one_pass_q8", 8, 20), {&bq, &bk8, &bkd, &bv8, &bvd, &bpos, &bml, &bo}, p1, n_head, blocks);
    one.dispatch(pipeline("layer_ops_attention_combine_rescaled", 4, 8), {&bo, &bml, &bpos, &bout1}, p2, n_head);
    one.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_attention_one_pass_q8", download(bout1, want.size()), want, what + ", one pass");
    // The same with TRUENO_ATTENTION_Q8_SWIZZLE (Note [Swizzled runs of 16 floats]): only where values sit
    // in shared memory changes, so every output bit is the same.
    Buffer bout2(context(), want.size() * 4);
    Recorder swz(context());
    swz.dispatch(pipeline("layer_ops_attention_one_pass_q8_swizzled", 8, 20), {&bq, &bk8, &bkd, &bv8, &bvd, &bpos, &bml, &bo}, p1, n_head,
                 blocks);
    swz.dispatch(pipeline("layer_ops_attention_combine_rescaled", 4, 8), {&bo, &bml, &bpos, &bout2}, p2, n_head);
    swz.submit();
    const auto plain = download(bout1, want.size()), swizzled = download(bout2, want.size());
    EXPECT_EQ(0, std::memcmp(plain.data(), swizzled.data(), plain.size() * sizeof(float))) << what << ": swizzled shared memory changed the output";
  }
}

#else
TEST(DecyVulkanGpu, Warp32NeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
