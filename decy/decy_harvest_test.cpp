// The project's kernels decy harvested through template helpers and lambdas (Note [Lambdas and template
// helpers], decy/parse.cpp): src/cuda/kernels' dequant_*_f16, fp8_from_f32/_f16 and tensor_ops' f16
// conversions, and testdata's dp4a, translated and compiled at build time (decy/CMakeLists.txt), run on a Vulkan device
// (lavapipe in CI) against the CPU references the CUDA kernels are tested against, under
// contracts/gpu/decy.yaml. A visible skip without a Vulkan device or the features a kernel needs.
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

// A buffer holding `bytes` (rounded up to 16: the kernels' vector views read whole 8- and 16-byte elements).
Buffer upload_bytes(const void* data, std::size_t bytes) {
  Buffer b(context(), (bytes + 15) / 16 * 16);
  b.upload(data, bytes);
  return b;
}

// f16 bits as exact floats, so the contract's exact comparison compares bits.
std::vector<float> as_floats(const std::vector<std::uint16_t>& h) { return std::vector<float>(h.begin(), h.end()); }

// dequant_<type>_f16: out[r][c] = f16(the CPU decoder's f32 value), bit for bit (the CUDA test's
// statement, src/cuda/cuda_test.cpp). Block formats at 768 columns take the eight-per-thread path,
// float rows of 13 the one-per-thread path; 4 workgroups of 64 threads, so the grid-stride loop turns.
TEST(DecyVulkanGpu, ProjectDequantF16MatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit || !info.storage_8bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64, 16- or 8-bit storage";
  using trueno::QuantType;
  const struct {
    QuantType type;
    const char* kernel;
    std::size_t cols;
  } cases[] = {{QuantType::Q4_K, "q4_k", 768}, {QuantType::Q5_K, "q5_k", 768}, {QuantType::Q6_K, "q6_k", 768},
               {QuantType::Q8_0, "q8_0", 768}, {QuantType::Q4_0, "q4_0", 768}, {QuantType::F32, "f32", 13},
               {QuantType::BF16, "bf16", 13},  {QuantType::F32, "f32", 768}};
  const std::uint32_t block = 64, spec[1] = {block};
  for (const auto& k : cases) {
    const std::size_t rows = 9, cols = k.cols, rb = trueno::quant_row_bytes(k.type, cols);
    const auto wf = trueno::test::random_normal(rows * cols, rng(), 0.05f);
    std::vector<std::byte> w(rows * rb);
    for (std::size_t r = 0; r < rows; ++r)
      trueno::quantize(k.type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
    std::vector<float> deq(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
      trueno::dequantize(trueno::QuantRow::view(k.type, std::span(w).subspan(r * rb, rb), cols), std::span(deq).subspan(r * cols, cols));
    std::vector<std::uint16_t> want(rows * cols), got(rows * cols);
    trueno::ops::f32_to_f16(deq, want);
    Buffer bw = upload_bytes(w.data(), w.size()), bo(context(), (rows * cols * 2 + 15) / 16 * 16);
    const std::string name = std::string("dequant_f16_dequant_") + k.kernel + "_f16";
    const Pipeline& p = context().pipeline_from_spirv(name, spirv(name), 2, 8, spec);
    Recorder rec(context());
    const std::int32_t push[2] = {static_cast<std::int32_t>(rows), static_cast<std::int32_t>(cols)};
    rec.dispatch(p, {&bw, &bo}, push, 4);
    rec.submit();
    bo.download(got.data(), got.size() * 2);
    trueno::test::expect_gpu_contract("decy", std::string("dequant_f16_") + k.kernel, as_floats(got), as_floats(want),
                                      std::to_string(rows) + " x " + std::to_string(cols));
  }
}

// E4M3 of v, rounding to nearest even and saturating to +-448: the CPU statement of fp8_from_* (as in
// src/cuda/prefill_test.cpp, in double).
std::uint8_t e4m3(float v) {
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(v));
  if (a >= 448.0) return sign | 0x7E;
  int e = 0;
  std::frexp(a, &e);
  const double step = std::ldexp(1.0, std::max(e - 1, -6) - 3), r = std::nearbyint(a / step) * step;
  if (r >= 448.0) return sign | 0x7E;
  if (r == 0.0) return sign;
  std::frexp(r, &e);
  if (e - 1 < -6) return sign | static_cast<std::uint8_t>(r / std::ldexp(1.0, -9));
  return sign | static_cast<std::uint8_t>((e + 6) << 3) | static_cast<std::uint8_t>((r / std::ldexp(1.0, e - 1) - 1.0) * 8.0);
}

// fp8_from_f32 / fp8_from_f16: scale = amax / 448, q = E4M3(x / scale) (the template helper `quantize` and
// its `load` lambda). Inputs span E4M3's range: saturation, subnormals and zeros of both signs included.
TEST(DecyVulkanGpu, ProjectFp8QuantizeMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit || !info.storage_8bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64, 16- or 8-bit storage";
  const std::size_t n = 1001;
  auto x = trueno::test::random_normal(n, rng(), 4.0f);
  x[0] = 0.0f, x[1] = -0.0f, x[2] = 1e-4f, x[3] = -3e-3f;
  std::vector<std::uint16_t> h(n);
  trueno::ops::f32_to_f16(x, h);
  std::vector<float> xh(n);
  trueno::ops::f16_to_f32(h, xh);
  const std::uint32_t block = 64, spec[1] = {block};
  for (const bool f16 : {false, true}) {
    const std::vector<float>& in = f16 ? xh : x;
    float amax = 0;
    for (float v : in) amax = std::max(amax, std::fabs(v));
    amax *= 0.5f;  // half the largest |x|: the other half saturates
    std::uint32_t amax_bits = 0;
    std::memcpy(&amax_bits, &amax, 4);
    Buffer bx = f16 ? upload_bytes(h.data(), n * 2) : upload_bytes(x.data(), n * 4), ba = upload_bytes(&amax_bits, 4);
    Buffer bq(context(), (n + 15) / 16 * 16), bs(context(), 16);
    const std::string name = f16 ? "fp8_ops_fp8_from_f16" : "fp8_ops_fp8_from_f32";
    const Pipeline& p = context().pipeline_from_spirv(name, spirv(name), 4, 8, spec);
    Recorder rec(context());
    const std::uint64_t push = n;
    rec.dispatch(p, {&bx, &ba, &bq, &bs}, push, 3);  // fewer threads than values: the grid-stride loop
    rec.submit();
    std::vector<std::uint8_t> q(n);
    float s = 0;
    bq.download(q.data(), n), bs.download(&s, 4);
    // The bytes against the CPU's E4M3 of x / (the scale the kernel wrote): the kernel's amax / 448.0f is
    // a division by a constant, which the SPIR-V path may turn into a multiply by 1/448 (Vulkan allows
    // 2.5 ULP; lavapipe's is 1 ULP off at times), and an ULP of scale moves a tie. The scale: obligation 1.
    std::vector<float> want, got(q.begin(), q.end());
    for (float v : in) want.push_back(e4m3(v / s));
    trueno::test::expect_gpu_contract("decy", name, got, want, std::to_string(n) + " bytes");
    trueno::test::expect_gpu_contract("decy", name, {s}, {amax / 448.0f}, "scale", 1);
    if (f16) continue;
    // fp8_from_f32_v4: the first 1000 values as 250 vec4, four bytes packed per word (Note [Vector FP8 casts]):
    // the scalar kernel's bytes and scale for the same input.
    const std::uint64_t n4 = n / 4;
    Buffer bw(context(), n4 * 4), bs4(context(), 16);
    const Pipeline& p4 = context().pipeline_from_spirv("fp8_ops_fp8_from_f32_v4", spirv("fp8_ops_fp8_from_f32_v4"), 4, 8, spec);
    Recorder rec4(context());
    rec4.dispatch(p4, {&bx, &ba, &bw, &bs4}, n4, 3);
    rec4.submit();
    std::vector<std::uint32_t> words(n4);
    float s4 = 0;
    bw.download(words.data(), n4 * 4), bs4.download(&s4, 4);
    std::vector<float> bytes4;
    for (std::uint32_t wd : words)
      for (int j = 0; j < 4; ++j) bytes4.push_back(static_cast<float>((wd >> (8 * j)) & 0xffu));
    trueno::test::expect_gpu_contract("decy", "fp8_ops_fp8_from_f32_v4", bytes4, std::vector<float>(got.begin(), got.begin() + 4 * n4),
                                      "1000 as 250 vec4, against the scalar kernel");
    trueno::test::expect_gpu_contract("decy", "fp8_ops_fp8_from_f32_v4", {s4}, {s}, "scale, against the scalar kernel", 1);
  }
}

// tensor_ops' f32 <-> f16 conversions (the cvt.rn.f16.f32 asm and the prelude's f16_to_f32) against
// trueno::ops, every bit; the special values of ProjectF16StoresMatchTheCpu included.
TEST(DecyVulkanGpu, ProjectTensorF16ConversionsMatchTheCpu) {  // and the bf16 ones, and the bias add
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().storage_16bit) GTEST_SKIP() << "skipped: the device lacks 16-bit storage";
  const std::uint32_t n = 515, block = 64, spec[1] = {block};
  auto x = trueno::test::random_normal(n, rng(), 3.0f);
  x[0] = 65504.0f, x[1] = 1e-6f, x[2] = -1e-8f, x[3] = 1e6f;  // largest f16, a subnormal, underflow, overflow
  std::vector<std::uint16_t> want(n), got(n);
  trueno::ops::f32_to_f16(x, want);
  {
    Buffer bx = upload_bytes(x.data(), n * 4), bo(context(), (n * 2 + 15) / 16 * 16);
    const Pipeline& p = context().pipeline_from_spirv("tensor_ops_tensor_f32_to_f16", spirv("tensor_ops_tensor_f32_to_f16"), 2, 4, spec);
    Recorder rec(context());
    rec.dispatch(p, {&bx, &bo}, n, 3);
    rec.submit();
    bo.download(got.data(), n * 2);
    trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_f32_to_f16", as_floats(got), as_floats(want), "515");
  }
  std::vector<float> back(n), gpu(n);
  trueno::ops::f16_to_f32(want, back);
  Buffer bh = upload_bytes(want.data(), n * 2), bf(context(), n * 4);
  const Pipeline& p = context().pipeline_from_spirv("tensor_ops_tensor_f16_to_f32", spirv("tensor_ops_tensor_f16_to_f32"), 2, 4, spec);
  Recorder rec(context());
  rec.dispatch(p, {&bh, &bf}, n, 3);
  rec.submit();
  bf.download(gpu.data(), n * 4);
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_f16_to_f32", gpu, back, "515");
  // The bf16 pair (round to nearest even, NaNs kept quiet) and tensor_add_bias_rows (__fadd_rn), every bit.
  x[4] = std::nanf(""), x[5] = -INFINITY, x[6] = 3.0e38f;
  std::vector<std::uint16_t> bwant(n), bgot(n);
  trueno::ops::f32_to_bf16(x, bwant);
  Buffer bx = upload_bytes(x.data(), n * 4), bb(context(), (n * 2 + 15) / 16 * 16);
  Recorder rb(context());
  rb.dispatch(context().pipeline_from_spirv("tensor_ops_tensor_f32_to_bf16", spirv("tensor_ops_tensor_f32_to_bf16"), 2, 4, spec), {&bx, &bb}, n, 3);
  rb.submit();
  bb.download(bgot.data(), n * 2);
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_f32_to_bf16", as_floats(bgot), as_floats(bwant), "515");
  std::vector<float> bback(n);
  trueno::ops::bf16_to_f32(bwant, bback);
  Buffer bh2 = upload_bytes(bwant.data(), n * 2), bf2(context(), n * 4);
  Recorder rb2(context());
  rb2.dispatch(context().pipeline_from_spirv("tensor_ops_tensor_bf16_to_f32", spirv("tensor_ops_tensor_bf16_to_f32"), 2, 4, spec), {&bh2, &bf2}, n, 3);
  rb2.submit();
  // The exact obligation compares bits (memcmp), so the NaN counts as equal to itself.
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_bf16_to_f32", download(bf2, n), bback, "515");
  const std::uint32_t cols = 37, total = 37 * 9;
  const auto y = trueno::test::random_normal(total, rng(), 1.0f), bias = trueno::test::random_normal(cols, rng(), 1.0f);
  std::vector<float> sum(total);
  for (std::uint32_t i = 0; i < total; ++i) sum[i] = y[i] + bias[i % cols];
  Buffer by = upload_bytes(y.data(), total * 4), bbias = upload_bytes(bias.data(), cols * 4), bo(context(), total * 4);
  const std::uint32_t push[2] = {cols, total};
  Recorder ra(context());
  ra.dispatch(context().pipeline_from_spirv("tensor_ops_tensor_add_bias_rows", spirv("tensor_ops_tensor_add_bias_rows"), 3, 8, spec),
              {&by, &bbias, &bo}, push, 3);
  ra.submit();
  trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_add_bias_rows", download(bo, total), sum, "9 rows of 37");
}

// tensor_elementwise (a switch over 18 op codes, erfcf for gelu_erf: Note [erfcf]) against the same formulas
// in f64 on the CPU (std::erfc for erfc), op by op; a grid-stride loop (3 blocks of 64 over 1000 values).
TEST(DecyVulkanGpu, ProjectTensorElementwiseMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const std::uint32_t n = 1000, block = 64, spec[1] = {block};
  const float alpha = 0.75f;
  const auto a = trueno::test::random_normal(n, rng(), 2.0f), b = trueno::test::random_normal(n, rng(), 1.0f);
  const auto sig = [](double u) { return 1.0 / (1.0 + std::exp(-u)); };
  const auto cpu = [&](int op, double x, double y) -> double {
    switch (op) {
      case 0: return x + y;
      case 1: return x - y;
      case 2: return x * y;
      case 3: return x / y;
      case 4: return x * sig(x) * y;
      case 5: return x * alpha;
      case 6: return std::fabs(x);
      case 7: return x > 0 ? x : 0;
      case 8: return std::exp(x);
      case 9: return sig(x);
      case 10: return std::tanh(x);
      case 11: return x * sig((x * x * x * 0.044715 + x) * 1.5957691216057308);
      case 12: return x * 0.5 * std::erfc(-x * 0.70710678118654752);
      case 13: return x * sig(x);
      case 14: return y * (sig(x) * (1 + x * (1 - sig(x))));
      case 15: {
        const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x), t = std::tanh(u);
        return y * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x * x));
      }
      case 16: return y * (1 - x) * (1 + x);
      default: return y * (x * (1 - x));
    }
  };
  Buffer ba = upload_bytes(a.data(), n * 4), bb = upload_bytes(b.data(), n * 4), bo(context(), n * 4);
  const Pipeline& p = context().pipeline_from_spirv("tensor_ops_tensor_elementwise", spirv("tensor_ops_tensor_elementwise"), 3, 12, spec);
  for (int op = 0; op < 18; ++op) {
    struct {
      std::uint32_t n;
      std::int32_t op;
      float alpha;
    } push{n, op, alpha};
    Recorder rec(context());
    rec.dispatch(p, {&ba, &bb, &bo}, push, 3);
    rec.submit();
    std::vector<float> got(n), want(n);
    bo.download(got.data(), n * 4);
    for (std::uint32_t i = 0; i < n; ++i) want[i] = static_cast<float>(cpu(op, a[i], b[i]));
    trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_elementwise", got, want, "op " + std::to_string(op));
  }
}

// tensor_arg_reduce (isnan from the bits, a float buffer also read as u32 indices, a shared-memory tree): the
// index of the largest value (is_min: of the smallest), a NaN beating every number, the first index among
// equals, in two launches (5 workgroups of partials, then one), as the CUDA launcher runs it.
TEST(DecyVulkanGpu, ProjectArgReduceMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const std::uint32_t n = 3000, groups = 5, block = 256, spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("tensor_ops_tensor_arg_reduce", spirv("tensor_ops_tensor_arg_reduce"), 3, 16, spec);
  const auto cpu = [&](const std::vector<float>& x, bool is_min) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < n; ++i) {
      const float v = is_min ? -x[i] : x[i], b = is_min ? -x[best] : x[best];
      if (std::isnan(v) != std::isnan(b) ? std::isnan(v) : !std::isnan(v) && v > b) best = i;
    }
    return best;
  };
  for (int c = 0; c < 3; ++c) {
    auto x = trueno::test::random_normal(n, rng(), 1.0f);
    x[2999] = x[1234] = 9.0f, x[17] = -9.0f, x[2500] = -9.0f;  // ties: the first index wins
    if (c == 2) x[2222] = std::nanf(""), x[2800] = std::nanf("");  // the first NaN wins both ways
    for (const int is_min : {0, 1}) {
      Buffer bx = upload_bytes(x.data(), n * 4), bp(context(), 2 * groups * 4), bo(context(), 16);
      Recorder rec(context());
      const std::uint32_t push0[4] = {n, static_cast<std::uint32_t>(is_min), 0, groups}, push1[4] = {n, static_cast<std::uint32_t>(is_min), 1, groups};
      rec.dispatch(p, {&bx, &bp, &bo}, push0, groups);
      rec.dispatch(p, {&bx, &bp, &bo}, push1, 1);
      rec.submit();
      std::int32_t got = -1;
      bo.download(&got, 4);
      trueno::test::expect_gpu_contract("decy", "tensor_ops_tensor_arg_reduce", {static_cast<float>(got)},
                                        {static_cast<float>(cpu(x, is_min != 0))},
                                        std::string(is_min ? "argmin" : "argmax") + (c == 2 ? " with NaNs" : "") + " of 3000");
    }
  }
}

// testdata's dp4a: __dp4a as decy_dp4a (Note [dp4a]) against the bytes' products on the CPU, wrapping as
// CUDA's; -128 and 127 bytes and accumulators near INT32_MIN / INT32_MAX included.
TEST(DecyVulkanGpu, Dp4aMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int n = 1000;
  std::vector<std::int32_t> a(n), b(n), c(n);
  std::uniform_int_distribution<std::uint32_t> d;
  for (int i = 0; i < n; ++i) a[i] = static_cast<std::int32_t>(d(rng())), b[i] = static_cast<std::int32_t>(d(rng())), c[i] = static_cast<std::int32_t>(d(rng()));
  a[0] = b[0] = static_cast<std::int32_t>(0x80808080u), c[0] = INT32_MAX;  // 4 * 16384 past INT32_MAX: wraps
  a[1] = static_cast<std::int32_t>(0x7f7f7f7fu), b[1] = static_cast<std::int32_t>(0x80808080u), c[1] = INT32_MIN;
  std::vector<float> want, got;
  for (int i = 0; i < n; ++i) {
    std::uint32_t s = static_cast<std::uint32_t>(c[i]);
    for (int k = 0; k < 4; ++k)
      s += static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(a[i] >> (8 * k))) *
                                      static_cast<std::int32_t>(static_cast<std::int8_t>(b[i] >> (8 * k))));
    want.push_back(static_cast<float>(static_cast<std::int32_t>(s) >> 16)), want.push_back(static_cast<float>(s & 0xffffu));
  }
  Buffer ba = upload_bytes(a.data(), n * 4), bb = upload_bytes(b.data(), n * 4), bc = upload_bytes(c.data(), n * 4);
  const std::uint32_t block = 64, spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("dp4a", spirv("dp4a"), 3, 4, spec);
  Recorder rec(context());
  rec.dispatch(p, {&ba, &bb, &bc}, n, (n + block - 1) / block);
  rec.submit();
  std::vector<std::int32_t> out(n);
  bc.download(out.data(), n * 4);
  for (int i = 0; i < n; ++i) got.push_back(static_cast<float>(out[i] >> 16)), got.push_back(static_cast<float>(out[i] & 0xffff));
  trueno::test::expect_gpu_contract("decy", "dp4a", got, want, "1000 (as 16-bit halves)");
}

#else
TEST(DecyVulkanGpu, HarvestNeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
