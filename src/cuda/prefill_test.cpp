// The prefill ops (kernels/prefill_ops.cu, ops/prefill.h, ops/gemm.h) against the CPU forward pass's
// arithmetic, by the obligations of contracts/gpu/cuda.yaml (CudaGpu.*: a visible skip without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cuda/cuda_test_support.h"
#include "trueno/cuda/ops/gemm.h"
#include "trueno/cuda/ops/gemm_fp8.h"
#include "trueno/cuda/ops/layer.h"
#include "trueno/cuda/ops/prefill.h"
#include "trueno/ops.h"

namespace trueno::cuda {
namespace {

using namespace testing;

std::vector<float> f16_bits_as_floats(const DeviceBuffer& b, std::size_t n, std::size_t offset_elems = 0) {
  test_context().synchronize();
  std::vector<std::uint16_t> h(n);
  b.download(h.data(), n * 2, offset_elems * 2);
  std::vector<float> f(n);
  ops::f16_to_f32(h, f);
  return f;
}

std::vector<float> rounded_to_f16(const std::vector<float>& x) {
  std::vector<std::uint16_t> h(x.size());
  std::vector<float> r(x.size());
  ops::f32_to_f16(x, h);
  ops::f16_to_f32(h, r);
  return r;
}

TEST(CudaGpu, PrefillElementwiseOpsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 20);
  for (std::size_t n : {1u, 1000u, 3u * 4096u + 7u}) {
    const auto x = random_vector(n, rng, 30.0f);
    DeviceBuffer dx = to_device(x), y(test_context(), n * 2);
    cast_f16(c, dx.ptr(), y.ptr(), n);
    expect_contract("cast_f16", f16_bits_as_floats(y, n), rounded_to_f16(x), std::to_string(n));
  }
  const std::size_t rows = 7, n = 300;
  const auto y = random_vector(rows * n, rng), b = random_vector(n, rng);
  std::vector<float> want = y;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < n; ++i) want[r * n + i] += b[i];
  DeviceBuffer dy = to_device(y), db = to_device(b);
  add_rows(c, dy.ptr(), db.ptr(), rows, n);
  expect_contract("add_rows", from_device(dy, rows * n), want, "7 x 300");
}

// Session::rope of realizar's CPU pass, for one token's heads.
void rope_cpu(float* v, int heads, int hd, int rope_dim, bool neox, const std::vector<float>& freqs, float ts, int pos) {
  float theta = static_cast<float>(pos);
  for (int i = 0; i < rope_dim / 2; ++i, theta *= ts) {
    const float t = freqs.empty() ? theta : theta / freqs[i], cs = std::cos(t), sn = std::sin(t);
    for (int h = 0; h < heads; ++h) {
      float* p = v + h * hd;
      const int a = neox ? i : 2 * i, b = neox ? i + rope_dim / 2 : 2 * i + 1;
      const float x0 = p[a], x1 = p[b];
      p[a] = x0 * cs - x1 * sn, p[b] = x0 * sn + x1 * cs;
    }
  }
}

TEST(CudaGpu, RopeAppendRowsMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 21);
  struct Shape { int n_head, n_kv, hd, rope_dim; bool neox, freqs; int T, pos0; };
  for (Shape sh : {Shape{8, 4, 8, 8, false, false, 5, 0}, Shape{32, 8, 128, 128, false, true, 33, 100},
                   Shape{14, 2, 64, 64, true, false, 17, 3}, Shape{4, 2, 64, 32, false, false, 9, 4000}}) {
    const int q_row = sh.n_head * sh.hd, kv_row = sh.n_kv * sh.hd, slots = sh.pos0 + sh.T + 2;
    const std::size_t T = sh.T;
    auto q = random_vector(T * q_row, rng), k = random_vector(T * kv_row, rng), v = random_vector(T * kv_row, rng);
    std::vector<float> freqs;
    if (sh.freqs)
      for (int i = 0; i < sh.rope_dim / 2; ++i) freqs.push_back(1.0f + static_cast<float>(i % 5));
    const float ts = std::pow(10000.0f, -2.0f / static_cast<float>(sh.rope_dim));
    DeviceBuffer dq = to_device(q), dk = to_device(k), dv = to_device(v), df = to_device(freqs.empty() ? std::vector<float>{0} : freqs);
    DeviceBuffer q16(test_context(), T * q_row * 2), kc(test_context(), static_cast<std::size_t>(slots) * kv_row * 2), vc(test_context(), static_cast<std::size_t>(slots) * kv_row * 2);
    rope_append_rows(c, dq.ptr(), dk.ptr(), dv.ptr(), T, sh.n_head, sh.n_kv, sh.pos0,
                     RopeParams{sh.hd, sh.rope_dim, ts, sh.freqs ? df.ptr() : 0, sh.neox}, q16.ptr(), kc.ptr(), vc.ptr());
    for (std::size_t t = 0; t < T; ++t) {
      rope_cpu(q.data() + t * q_row, sh.n_head, sh.hd, sh.rope_dim, sh.neox, freqs, ts, sh.pos0 + static_cast<int>(t));
      rope_cpu(k.data() + t * kv_row, sh.n_kv, sh.hd, sh.rope_dim, sh.neox, freqs, ts, sh.pos0 + static_cast<int>(t));
    }
    const std::string what = std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " x " + std::to_string(sh.hd) + " rope " +
                             std::to_string(sh.rope_dim) + ", " + std::to_string(sh.T) + " tokens at " + std::to_string(sh.pos0);
    const std::size_t at = static_cast<std::size_t>(sh.pos0) * kv_row;
    expect_contract("rope_append_rows", f16_bits_as_floats(q16, q.size()), rounded_to_f16(q), "q16 " + what);
    expect_contract("rope_append_rows", f16_bits_as_floats(kc, k.size(), at), rounded_to_f16(k), "k cache " + what);
    expect_contract("rope_append_rows", f16_bits_as_floats(vc, v.size(), at), rounded_to_f16(v), "v cache " + what);
  }
}

// The CPU pass's attention (Session::attention) in f64: q and the softmax weights rounded to f16, token
// t sees positions j <= pos0 + t of the f16 cache.
std::vector<float> attention_cpu(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int T, int pos0,
                                 int n_head, int hd, int group, int kv_row) {
  std::vector<float> out(static_cast<std::size_t>(T) * n_head * hd);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < n_head; ++h) {
      const int kvh = h / group, n = pos0 + t + 1;
      const std::vector<float> qh =
          rounded_to_f16(std::vector<float>(q.begin() + (t * n_head + h) * hd, q.begin() + (t * n_head + h + 1) * hd));
      std::vector<float> s(n);
      for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < hd; ++d) dot += double{k[static_cast<std::size_t>(j) * kv_row + kvh * hd + d]} * qh[d];
        s[j] = static_cast<float>(dot) * scale;
      }
      ops::softmax(s, s);
      s = rounded_to_f16(s);
      for (int d = 0; d < hd; ++d) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += double{s[j]} * v[static_cast<std::size_t>(j) * kv_row + kvh * hd + d];
        out[(static_cast<std::size_t>(t) * n_head + h) * hd + d] = static_cast<float>(acc);
      }
    }
  return out;
}

struct AttentionShape {
  int n_head, n_kv, hd, T, pos0;
};

// attention_prefill by `how` against the CPU's attention on random f16 q, k, v for each shape.
void check_attention_prefill(PrefillAttention how, const char* contract, std::initializer_list<AttentionShape> shapes, std::uint64_t seed) {
  Context& c = test_context();
  std::mt19937_64 rng(seed);
  PrefillAttentionScratch scratch;  // reused across shapes: it grows
  for (AttentionShape sh : shapes) {
    const int kv_row = sh.n_kv * sh.hd, group = sh.n_head / sh.n_kv, n_keys = sh.pos0 + sh.T;
    const auto q = random_vector(static_cast<std::size_t>(sh.T) * sh.n_head * sh.hd, rng);
    const auto k = rounded_to_f16(random_vector(static_cast<std::size_t>(n_keys) * kv_row, rng)),
               v = rounded_to_f16(random_vector(static_cast<std::size_t>(n_keys) * kv_row, rng));
    std::vector<std::uint16_t> q16(q.size()), kc(k.size()), vc(v.size());
    ops::f32_to_f16(q, q16), ops::f32_to_f16(k, kc), ops::f32_to_f16(v, vc);
    DeviceBuffer dq = to_device(q16), dk = to_device(kc), dv = to_device(vc), out(test_context(), q.size() * 4);
    attention_prefill(c, dq.ptr(), dk.ptr(), dv.ptr(), out.ptr(), sh.T, sh.pos0, scratch, sh.n_head, sh.hd, group, kv_row, how);
    expect_contract(contract, from_device(out, q.size()), attention_cpu(q, k, v, sh.T, sh.pos0, sh.n_head, sh.hd, group, kv_row),
                    std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " heads x " + std::to_string(sh.hd) + ", " +
                        std::to_string(sh.T) + " tokens after " + std::to_string(sh.pos0));
  }
}

TEST(CudaGpu, AttentionPrefillMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::string why;
  if (cublas(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  gpu_contract("softmax_causal");
  check_attention_prefill(PrefillAttention::Cublas, "attention_prefill",
                          {{8, 4, 8, 1, 0}, {8, 4, 8, 12, 0}, {8, 8, 8, 7, 30}, {32, 8, 128, 64, 0}, {14, 2, 64, 40, 77}, {32, 32, 128, 128, 5}},
                          test_seed() + 22);
}

// Head sizes 64 and 128, GQA groups 1, 4, 7 and 8, a single token, row tiles cut short (T x group not a
// multiple of 64), prompts after earlier positions (key tiles partly masked, many tiles).
TEST(CudaGpu, FlashAttentionPrefillMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  EXPECT_FALSE(flash_attention_applies(96, 96, 0, 0));
  EXPECT_FALSE(flash_attention_applies(128, 128, 0, 8));
  gpu_contract("flash_attention_64"), gpu_contract("flash_attention_128");
  check_attention_prefill(PrefillAttention::Flash, "attention_prefill_flash",
                          {{8, 8, 64, 1, 0}, {8, 2, 64, 37, 0}, {32, 4, 128, 100, 0}, {32, 32, 128, 130, 70}, {16, 4, 64, 65, 200},
                           {32, 8, 128, 64, 0}, {14, 2, 64, 40, 77}, {8, 8, 128, 64, 5000}, {32, 32, 128, 300, 0}},
                          test_seed() + 24);
}

// F32 weights are multiplied as f32 (no rounding to f16): against the f64 product.
TEST(CudaGpu, CublasGemmF32MatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::string why;
  if (cublas(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 23);
  for (auto [rows, T, cols] : {std::tuple<std::size_t, std::size_t, std::size_t>{64, 2, 64}, {333, 17, 512}, {1024, 128, 4096}}) {
    const auto w = random_vector(rows * cols, rng, 0.05f), x = random_vector(T * cols, rng), y0 = random_vector(T * rows, rng);
    std::vector<float> want(T * rows);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t r = 0; r < rows; ++r) {
        double acc = 0;
        for (std::size_t k = 0; k < cols; ++k) acc += double{x[t * cols + k]} * w[r * cols + k];
        want[t * rows + r] = static_cast<float>(acc + y0[t * rows + r]);
      }
    DeviceBuffer dw = to_device(w), dx = to_device(x), dy = to_device(y0);
    gemm(c, GemmOperand::F32, rows, T, cols, dw.ptr(), dx.ptr(), dy.ptr(), 1.0f);
    expect_contract("gemm_f32", from_device(dy, T * rows), want,
                    std::to_string(T) + "x" + std::to_string(cols) + " times " + std::to_string(rows) + " rows, beta 1");
  }
}

}  // namespace
}  // namespace trueno::cuda

namespace trueno::cuda {
namespace {

using namespace testing;

// E4M3 (sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinities; largest finite 448) of v:
// round to nearest even, saturating - the CPU statement of what fp8_from_* computes.
std::uint8_t e4m3(float v) {
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(v));
  if (a >= 448.0) return sign | 0x7E;
  int e = 0;
  std::frexp(a, &e);
  const int exponent = std::max(e - 1, -6);                    // below 2^-6: subnormals, spacing 2^-9
  const double step = std::ldexp(1.0, exponent - 3), r = std::nearbyint(a / step) * step;  // ties to even
  if (r >= 448.0) return sign | 0x7E;
  if (r == 0.0) return sign;
  std::frexp(r, &e);
  if (e - 1 < -6) return sign | static_cast<std::uint8_t>(r / std::ldexp(1.0, -9));
  const int E = e - 1;
  return sign | static_cast<std::uint8_t>((E + 7) << 3) | static_cast<std::uint8_t>((r / std::ldexp(1.0, E) - 1.0) * 8.0);
}

float from_e4m3(std::uint8_t b) {
  const int exponent = (b >> 3) & 0xF, mantissa = b & 7;
  const double m = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return static_cast<float>(b & 0x80 ? -m : m);
}

TEST(CudaFp8, CpuEncoderRoundTripsEveryFiniteValue) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;  // NaN
    EXPECT_EQ(e4m3(from_e4m3(static_cast<std::uint8_t>(b))), b == 0x80 ? 0x80 : b) << b;
  }
  EXPECT_EQ(e4m3(1000.0f), 0x7E);    // saturates to 448
  EXPECT_EQ(e4m3(1.0625f), 0x38);    // the tie 1 + 1/16 goes to the even mantissa (1.0)
  EXPECT_EQ(e4m3(1.1875f), 0x3A);    // 1 + 3/16 -> 1.25
}

struct Fp8Result {
  std::vector<std::uint8_t> q;
  float scale;
};

Fp8Result download(const Fp8Tensor& t, std::size_t n) {
  test_context().synchronize();
  Fp8Result r{std::vector<std::uint8_t>(n), 0};
  t.data.download(r.q.data(), n);
  t.amax_scale.download(&r.scale, 4);
  return r;
}

Fp8Result fp8_cpu(const std::vector<float>& x) {
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  Fp8Result r{{}, amax > 0 ? amax / 448.0f : 1.0f};
  for (float v : x) r.q.push_back(e4m3(v / r.scale));
  return r;
}

void expect_fp8_equal(const std::string& op, const Fp8Result& gpu, const Fp8Result& cpu, const std::string& what) {
  std::vector<float> g(gpu.q.begin(), gpu.q.end()), c(cpu.q.begin(), cpu.q.end());  // the bytes, compared exactly
  g.push_back(gpu.scale), c.push_back(cpu.scale);
  expect_contract(op, g, c, what);
}

TEST(CudaGpu, Fp8QuantizationMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 24);
  // 1000 and 262144 values take the vector kernels (Note [Vector FP8 casts]), 1 and 70001 the scalar
  // ones, and 1000 values 4 bytes past an aligned start (not 16-byte aligned) the scalar ones too.
  for (std::size_t n : {1u, 1000u, 70001u, 262144u}) {
    const auto x = random_vector(n, rng, 3.0f);
    Fp8Tensor t(test_context(), n + 5);
    DeviceBuffer dx = to_device(x);
    quantize_fp8_f32(c, dx.ptr(), n, t);
    gpu_contract("amax_f32"), gpu_contract("amax_f32_v4");
    expect_fp8_equal(n % 4 == 0 ? "fp8_from_f32_v4" : "fp8_from_f32", download(t, n), fp8_cpu(x), std::to_string(n));
    if (n == 1000) {
      std::vector<float> shifted(n + 1, 0.0f);
      std::copy(x.begin(), x.end(), shifted.begin() + 1);
      DeviceBuffer ds = to_device(shifted);
      quantize_fp8_f32(c, ds.ptr() + 4, n, t);
      expect_fp8_equal("fp8_from_f32", download(t, n), fp8_cpu(x), "1000 values at an address 4 bytes past 16-byte alignment");
    }
    const auto x16 = rounded_to_f16(x);
    std::vector<std::uint16_t> h(n);
    ops::f32_to_f16(x, h);
    DeviceBuffer dh = to_device(h);
    quantize_fp8_f16(c, dh.ptr(), n, t);
    gpu_contract("amax_f16");
    expect_fp8_equal("fp8_from_f16", download(t, n), fp8_cpu(x16), std::to_string(n));
  }
  std::vector<float> zeros(64, 0.0f);  // amax 0: scale 1, every byte 0
  Fp8Tensor t(test_context(), 64);
  DeviceBuffer dz = to_device(zeros);
  quantize_fp8_f32(c, dz.ptr(), 64, t);
  expect_fp8_equal("fp8_from_f32", download(t, 64), fp8_cpu(zeros), "zeros");
}

// The prompt pass's rmsnorm and swiglu that also leave their output's amax (Note [FP8 prefill]): the same
// values as rmsnorm and swiglu, and cast_fp8_f32 of them the same bytes and scale as quantize_fp8_f32's
// amax pass gives; rows of 4096 (four values per load) and 173 (one), swiglu over 1000 and 1001 values.
TEST(CudaGpu, Fp8AmaxOfTheNormAndSwigluEqualsTheSeparatePass) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 25);
  for (std::size_t n : {4096u, 173u}) {
    const std::size_t rows = 3;
    const auto x = random_vector(rows * n, rng, 2.0f), w = random_vector(n, rng);
    DeviceBuffer dx = to_device(x), dw = to_device(w), plain(c, rows * n * 4), fused(c, rows * n * 4);
    Fp8Tensor a(c, rows * n), b(c, rows * n);
    rmsnorm(c, dx.ptr(), dw.ptr(), 1e-5f, plain.ptr(), rows, n);
    quantize_fp8_f32(c, plain.ptr(), rows * n, a);
    rmsnorm_amax(c, dx.ptr(), dw.ptr(), 1e-5f, fused.ptr(), rows, n, b);
    cast_fp8_f32(c, fused.ptr(), rows * n, b);
    const std::string what = "3 rows of " + std::to_string(n);
    expect_contract("rmsnorm_amax", from_device(fused, rows * n), from_device(plain, rows * n), what);
    expect_fp8_equal("rmsnorm_amax", download(b, rows * n), download(a, rows * n), what + ", cast");
  }
  for (std::size_t n : {1000u, 1001u}) {
    const auto g = random_vector(n, rng, 3.0f), u = random_vector(n, rng);
    DeviceBuffer g1 = to_device(g), g2 = to_device(g), du = to_device(u);
    Fp8Tensor a(c, n), b(c, n);
    swiglu(c, g1.ptr(), du.ptr(), n);
    quantize_fp8_f32(c, g1.ptr(), n, a);
    swiglu_amax(c, g2.ptr(), du.ptr(), n, b);
    cast_fp8_f32(c, g2.ptr(), n, b);
    expect_contract("swiglu_amax", from_device(g2, n), from_device(g1, n), std::to_string(n));
    expect_fp8_equal("swiglu_amax", download(b, n), download(a, n), std::to_string(n) + ", cast");
  }
}

// cuBLASLt's FP8 product against the f64 product of (a) the same E4M3 values and scales: only the
// accumulation order differs; (b) the unquantized f32 operands: E4M3's 3-bit mantissa is the error.
TEST(CudaGpu, CublasLtGemmFp8MatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::string why;
  if (cublaslt(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 25);
  for (auto [rows, T, cols] : {std::tuple<std::size_t, std::size_t, std::size_t>{256, 16, 512}, {1024, 7, 4096}, {1024, 128, 4096}}) {
    const auto w = random_vector(rows * cols, rng, 0.05f), x = random_vector(T * cols, rng), y0 = random_vector(T * rows, rng);
    DeviceBuffer dw = to_device(w), dx = to_device(x), dy = to_device(y0);
    Fp8Tensor w8(test_context(), rows * cols), x8(test_context(), T * cols);
    quantize_fp8_f32(c, dw.ptr(), rows * cols, w8);
    quantize_fp8_f32(c, dx.ptr(), T * cols, x8);
    gemm_fp8(c, rows, T, cols, w8, x8, dy.ptr(), 1.0f);
    const auto got = from_device(dy, T * rows);
    const Fp8Result gw = download(w8, rows * cols), gx = download(x8, T * cols);
    std::vector<float> wq(gw.q.size()), xq(gx.q.size()), same(T * rows), exact(T * rows);
    std::transform(gw.q.begin(), gw.q.end(), wq.begin(), from_e4m3);
    std::transform(gx.q.begin(), gx.q.end(), xq.begin(), from_e4m3);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t r = 0; r < rows; ++r) {
        double q = 0, e = 0;
        for (std::size_t k = 0; k < cols; ++k) {
          q += double{xq[t * cols + k]} * wq[r * cols + k];
          e += double{x[t * cols + k]} * w[r * cols + k];
        }
        same[t * rows + r] = static_cast<float>(q * gx.scale * gw.scale + y0[t * rows + r]);
        exact[t * rows + r] = static_cast<float>(e + y0[t * rows + r]);
      }
    const std::string what = std::to_string(T) + "x" + std::to_string(cols) + " times " + std::to_string(rows) + " rows, beta 1";
    expect_contract("gemm_fp8", got, same, what + " (same E4M3 operands)", 0);
    expect_contract("gemm_fp8", got, exact, what + " (unquantized operands)", 1);
  }
}

}  // namespace
}  // namespace trueno::cuda
