// Quantized formats: type table, decoding of hand-built blocks, round-trip error bounds per type,
// and exact decoding of the real files against the same weights in F16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "core/half.h"
#include "quant/blocks.h"
#include "support/gguf_tensors.h"
#include "trueno/error.h"
#include "trueno/quant.h"

namespace trueno {
namespace detail {
extern bool g_force_scalar_quant;
}
namespace {

std::vector<float> decode(QuantType t, const std::vector<std::byte>& bytes, std::size_t n) {
  std::vector<float> y(n);
  dequantize(QuantRow::view(t, bytes, n), y);
  return y;
}

std::vector<std::byte> encode(QuantType t, const std::vector<float>& x) {
  std::vector<std::byte> q(quant_row_bytes(t, x.size()));
  quantize(t, x, q);
  return q;
}

// Blocks whose largest value is denormal or at the top of the float range: degenerate scales (1/d = inf)
// must give finite, bounded results, not undefined float->int conversions (UBSan in the debug build;
// found by the GGUF fuzzer through a model with extreme weights).
TEST(QuantRoundTrip, DegenerateScalesStayDefined) {
  for (QuantType t : kQuantTypes) {
    if (t == QuantType::F32 || t == QuantType::F16 || t == QuantType::BF16) continue;
    for (float v : {1e-45f, 1e-40f, 3e38f}) {
      std::vector<float> x(256, 0.0f);
      for (std::size_t i = 0; i < x.size(); i += 3) x[i] = (i % 2 ? -v : v);
      const auto y = decode(t, encode(t, x), x.size());
      for (float e : y) EXPECT_TRUE(std::isfinite(e) || v > 1e38f) << quant_info(t).name << " " << v;
    }
  }
}

// Note [SIMD activation quantization] (quantize_ref.cpp): the SSE2 Q8_0/Q8_K quantizers write the same
// bytes as the scalar loops, on ordinary data, ties in magnitude (+a before -a and the reverse), zeros,
// -0, denormal and huge block maxima, and integers at the rounding midpoints.
TEST(QuantActivations, SimdQuantizersMatchScalar) {
  std::mt19937 rng(12345);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<std::vector<float>> cases;
  for (int r = 0; r < 40; ++r) {
    std::vector<float> x(1024);
    for (auto& v : x) v = nd(rng) * (r % 5 == 0 ? 1e-3f : r % 7 == 0 ? 1e4f : 1.0f);
    cases.push_back(x);
  }
  std::vector<float> ties(1024, 0.5f);
  ties[3] = -2.0f, ties[300] = 2.0f, ties[600] = 2.0f, ties[700] = -2.0f;
  cases.push_back(ties);
  cases.push_back(std::vector<float>(1024, 0.0f));
  cases.push_back(std::vector<float>(1024, -0.0f));
  for (float v : {1e-45f, 1e-40f, 3e38f, -3e38f}) {
    std::vector<float> x(1024, 0.0f);
    for (std::size_t i = 0; i < x.size(); i += 3) x[i] = (i % 2 ? -v : v);
    cases.push_back(x);
  }
  std::vector<float> mid(1024);
  for (std::size_t i = 0; i < mid.size(); ++i) mid[i] = (static_cast<float>(i % 255) - 127.0f) + (i % 2 ? 0.5f : -0.5f);
  cases.push_back(mid);
  for (QuantType t : {QuantType::Q8_0, QuantType::Q8_K}) {
    for (const auto& x : cases) {
      const auto simd = encode(t, x);
      detail::g_force_scalar_quant = true;
      const auto scalar = encode(t, x);
      detail::g_force_scalar_quant = false;
      ASSERT_EQ(simd.size(), scalar.size());
      EXPECT_EQ(std::memcmp(simd.data(), scalar.data(), simd.size()), 0) << quant_info(t).name << " first " << x[0];
    }
  }
}

TEST(QuantTypes, TableAndRowSizes) {
  EXPECT_EQ(quant_row_bytes(QuantType::Q4_K, 4096), 16u * 144u);
  EXPECT_EQ(quant_row_bytes(QuantType::Q6_K, 256), 210u);
  EXPECT_EQ(quant_row_bytes(QuantType::Q8_0, 64), 68u);
  EXPECT_EQ(quant_row_bytes(QuantType::F16, 3), 6u);
  EXPECT_EQ(quant_type_from_id(14), QuantType::Q6_K);
  EXPECT_EQ(parse_quant_type("Q4_K"), QuantType::Q4_K);
  try {
    quant_row_bytes(QuantType::Q4_K, 100);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("q4_k: a row of 100 elements is not a multiple of the block size 256"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(quant_type_from_id(3), InvalidArgument);  // Q4_1: not implemented, named as such
  std::vector<std::byte> short_row(143);
  EXPECT_THROW(QuantRow::view(QuantType::Q4_K, short_row, 256), ShapeError);
  std::vector<float> nan_row(32, 0.0f);
  nan_row[5] = NAN;
  std::vector<std::byte> out(34);
  EXPECT_THROW(quantize(QuantType::Q8_0, nan_row, out), InvalidArgument);
}

TEST(QuantDecode, HandBuiltBlocks) {
  {  // Q4_0: d = 1, low nibbles j, high nibbles 15 - j
    quant::BlockQ4_0 b;
    b.d = detail::f32_to_f16_bits(1.0f);
    for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
    std::vector<std::byte> bytes(sizeof b);
    std::memcpy(bytes.data(), &b, sizeof b);
    const auto y = decode(QuantType::Q4_0, bytes, 32);
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(y[j], static_cast<float>(j - 8));
      EXPECT_EQ(y[j + 16], static_cast<float>(7 - j));
    }
  }
  {  // Q6_K: d = 0.5, scale of sub-block j = j - 8, every q = 32 + (element % 5) - 2
    quant::BlockQ6_K b{};
    b.d = detail::f32_to_f16_bits(0.5f);
    int q[256];
    for (int i = 0; i < 256; ++i) q[i] = 32 + (i % 5) - 2;
    for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<std::int8_t>(j - 8);
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l) {
        const int* qq = q + 128 * h;
        b.ql[64 * h + l] = static_cast<std::uint8_t>((qq[l] & 0xF) | ((qq[l + 64] & 0xF) << 4));
        b.ql[64 * h + l + 32] = static_cast<std::uint8_t>((qq[l + 32] & 0xF) | ((qq[l + 96] & 0xF) << 4));
        b.qh[32 * h + l] = static_cast<std::uint8_t>((qq[l] >> 4) | ((qq[l + 32] >> 4) << 2) | ((qq[l + 64] >> 4) << 4) |
                                                     ((qq[l + 96] >> 4) << 6));
      }
    std::vector<std::byte> bytes(sizeof b);
    std::memcpy(bytes.data(), &b, sizeof b);
    const auto y = decode(QuantType::Q6_K, bytes, 256);
    for (int i = 0; i < 256; ++i) EXPECT_EQ(y[i], 0.5f * static_cast<float>(i / 16 - 8) * static_cast<float>(q[i] - 32)) << i;
  }
}

// Round trip on Gaussian data with a few outliers: every element within the bound of its block.
struct RoundTrip {
  QuantType type;
  double max_rel_rmse;  // RMSE / RMS of the data
};

class QuantRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(QuantRoundTrip, ErrorIsBoundedPerElementAndOnAverage) {
  const auto [type, max_rel_rmse] = GetParam();
  const char* env = std::getenv("TRUENO_TEST_SEED");  // a printed seed reruns the same data
  const unsigned seed = env != nullptr ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device{}();
  std::cout << "[quant] seed " << seed << " (rerun with TRUENO_TEST_SEED=" << seed << ")\n";
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.02f);
  std::vector<float> x(256 * 16);
  for (auto& v : x) v = g(rng);
  for (int i = 0; i < 8; ++i) x[rng() % x.size()] *= 20.0f;  // outliers, as real weights have
  x[300] = 0.0f;
  for (int i = 512; i < 768; ++i) x[i] = 0.0f;  // an all-zero block
  const auto q = encode(type, x);
  const auto y = decode(type, q, x.size());
  const std::size_t be = quant_info(type).block_elems;
  double se = 0, ss = 0;
  for (std::size_t b0 = 0; b0 < x.size(); b0 += std::max<std::size_t>(be, 32)) {
    // Bound: one quantization step of the block's largest magnitude over its levels (and the
    // k-quant sub-block parameters, themselves rounded to 6/8 bits, cost at most another step).
    float amax = 0;
    const std::size_t end = std::min(x.size(), b0 + std::max<std::size_t>(be, 32));
    for (std::size_t i = b0; i < end; ++i) amax = std::max(amax, std::fabs(x[i]));
    double step = 0;
    switch (type) {
      case QuantType::F32: step = 0; break;
      case QuantType::F16: step = amax * std::ldexp(1.0, -11); break;
      case QuantType::BF16: step = amax * std::ldexp(1.0, -8); break;
      case QuantType::Q8_0: case QuantType::Q8_K: step = amax / 127.0 * 0.51; break;
      case QuantType::Q4_0: step = amax / 8.0 * 1.01; break;
      case QuantType::Q4_K: step = 2.0 * amax / 15.0 * 1.3; break;
      case QuantType::Q5_K: step = 2.0 * amax / 31.0 * 1.3; break;
      case QuantType::Q6_K: step = amax / 32.0 * 1.3; break;
      default: FAIL() << quant_info(type).name << " has no round-trip bound here";
    }
    for (std::size_t i = b0; i < end; ++i) {
      // The float types round each element to nearest: within half an ulp of its own magnitude (2^-11 of
      // it for f16, 2^-8 for bf16; f16's subnormals below 2^-14 are 2^-24 apart).
      if (type == QuantType::F16) step = std::fabs(x[i]) * std::ldexp(1.0, -11) + std::ldexp(1.0, -25);
      if (type == QuantType::BF16) step = std::fabs(x[i]) * std::ldexp(1.0, -8);
      ASSERT_LE(std::fabs(y[i] - x[i]), step + 1e-30) << quant_info(type).name << " element " << i << ": " << x[i]
                                                      << " -> " << y[i] << " (seed " << seed << ")";
      se += (y[i] - x[i]) * (y[i] - x[i]), ss += x[i] * x[i];
    }
  }
  for (int i = 512; i < 768; ++i) ASSERT_EQ(y[i], 0.0f) << "zero block must decode to zeros";
  std::cout << "[quant] " << quant_info(type).name << " relative RMSE " << std::sqrt(se / ss) << "\n";
  EXPECT_LE(std::sqrt(se / ss), max_rel_rmse) << quant_info(type).name << " (seed " << seed << ")";
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantRoundTrip,
                         // RMSE bounds: 1.5x the worst of 6 seeds; the outliers (x20) dominate them, as
                         // they widen their blocks' steps. The float types: the per-element bound above,
                         // which bounds the relative RMSE of any data too (2^-11, 2^-8 = 0.0039; a few
                         // outliers carry most of it, so seeds vary: bf16 gave 0.0033 once, over the 3e-3
                         // of the old 1.5x rule).
                         ::testing::Values(RoundTrip{QuantType::F32, 0.0}, RoundTrip{QuantType::F16, std::ldexp(1.0, -11)},
                                           RoundTrip{QuantType::BF16, std::ldexp(1.0, -8)}, RoundTrip{QuantType::Q8_0, 0.015},
                                           RoundTrip{QuantType::Q8_K, 0.04}, RoundTrip{QuantType::Q4_0, 0.2},
                                           RoundTrip{QuantType::Q4_K, 0.15}, RoundTrip{QuantType::Q5_K, 0.075},
                                           RoundTrip{QuantType::Q6_K, 0.04}),
                         [](const auto& info) { return std::string(quant_info(info.param.type).name); });

// The quantization step (value of one integer level) of the sub-block holding element i of a row.
double quant_step(QuantType type, std::span<const std::byte> row, std::size_t i) {
  const std::size_t blk = i / quant_info(type).block_elems, in = i % quant_info(type).block_elems;
  const std::byte* p = row.data() + blk * quant_info(type).block_bytes;
  switch (type) {
    case QuantType::Q8_0: {
      quant::BlockQ8_0 b;
      std::memcpy(&b, p, sizeof b);
      return std::fabs(detail::f16_bits_to_f32(b.d));
    }
    case QuantType::Q4_K: {
      quant::BlockQ4_K b;
      std::memcpy(&b, p, sizeof b);
      int sc, m;
      quant::k_scale_min(b.scales, static_cast<int>(in / 32), &sc, &m);
      // One level, plus one unit of the 6-bit min: values below the stored min clamp to level 0.
      return detail::f16_bits_to_f32(b.d) * sc + std::fabs(detail::f16_bits_to_f32(b.dmin));
    }
    case QuantType::Q6_K: {
      quant::BlockQ6_K b;
      std::memcpy(&b, p, sizeof b);
      return std::fabs(detail::f16_bits_to_f32(b.d) * b.scales[in / 16]);
    }
    default:
      throw std::logic_error("no step for this type");
  }
}

// The real files: each quantized tensor decodes to the F16 file's weights within one quantization step
// of its block, and our quantizer fits the same weights about as well as the one that made the file.
class RealFile : public ::testing::TestWithParam<const char*> {};

TEST_P(RealFile, DecodesToTheF16WeightsAndRequantizesAsWell) {
  const std::string dir = test::testdata_dir() + "/models/";
  const test::GgufTensors f16(dir + "tiny-llama-f16.gguf");
  const test::GgufTensors quantized(dir + GetParam());
  int checked = 0;
  for (const auto& [name, t] : quantized.all()) {
    const QuantType type = quant_type_from_id(t.type);
    if (quant_info(type).block_elems == 1) continue;
    const auto& ref = f16.at(name);
    ASSERT_EQ(ref.ne, t.ne) << name;
    const std::size_t cols = t.ne[0], rows = t.elements() / cols, rb = quant_row_bytes(type, cols);
    std::vector<float> y(cols), w(cols);
    std::vector<std::byte> ours(rb);
    double se_file = 0, se_ours = 0, worst_step = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      dequantize(QuantRow::view(type, t.data.subspan(r * rb, rb), cols), y);
      dequantize(QuantRow::view(QuantType::F16, ref.data.subspan(r * cols * 2, cols * 2), cols), w);
      // Each element is within one quantization step of its sub-block, read from the block itself.
      for (std::size_t i = 0; i < cols; ++i) {
        const double step = quant_step(type, t.data.subspan(r * rb, rb), i) * 1.0001 + 1e-7;
        worst_step = std::max(worst_step, step);
        ASSERT_LE(std::fabs(y[i] - w[i]), step) << name << " row " << r << " element " << i;
      }
      quantize(type, w, ours);
      std::vector<float> back(cols);
      dequantize(QuantRow::view(type, ours, cols), back);
      for (std::size_t i = 0; i < cols; ++i) se_file += (y[i] - w[i]) * (y[i] - w[i]), se_ours += (back[i] - w[i]) * (back[i] - w[i]);
    }
    std::cout << "[quant] " << name << " (" << quant_info(type).name << "): squared error ours/file = "
              << se_ours / se_file << "\n";
    EXPECT_LE(se_ours, se_file * 1.25) << name << ": our " << quant_info(type).name << " quantizer's squared error "
                                       << se_ours << " vs the file's " << se_file;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

INSTANTIATE_TEST_SUITE_P(TinyLlama, RealFile,
                         ::testing::Values("tiny-llama-q4_k_m.gguf", "tiny-llama-q6_k.gguf", "tiny-llama-q8_0.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace trueno
