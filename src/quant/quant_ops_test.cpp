// Fused quantized matvec / gate-up-SwiGLU / batched matmul through the public API, every backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <iostream>
#include <random>
#include <vector>

#include "cpu/kernels/qdot/qgemm_amx.h"
#include "support/gguf_tensors.h"
#include "trueno/trueno.h"
#include "trueno/quant.h"

namespace trueno {
namespace {

struct Problem {
  QuantType type;
  std::size_t rows, cols;
  std::vector<std::byte> w;
  std::vector<double> w_exact;  // dequantized exactly, row-major
  std::vector<float> x;
};

Problem make(QuantType type, std::size_t rows, std::size_t cols, unsigned seed) {
  Problem p{type, rows, cols, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.02f);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  const std::size_t rb = quant_row_bytes(type, cols);
  p.w.resize(rows * rb);
  p.w_exact.resize(rows * cols);
  std::vector<float> row(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = g(rng);
    std::span<std::byte> dst(p.w.data() + r * rb, rb);
    quantize(type, row, dst);
    dequantize_exact(QuantRow::view(type, dst, cols), std::span<double>(p.w_exact.data() + r * cols, cols));
  }
  p.x.resize(cols);
  for (auto& v : p.x) v = u(rng);
  return p;
}

// |y_r - (W x)_r| <= sum_i |w_ri| * d_x / 2 (activation quantization) + 1e-5 relative slack.
void expect_close(const Problem& p, const std::vector<float>& y, const char* what) {
  const bool k = p.type == QuantType::Q4_K || p.type == QuantType::Q5_K || p.type == QuantType::Q6_K;
  const std::size_t xb = k ? 256 : 32;
  std::vector<double> dx(p.cols);
  for (std::size_t b0 = 0; b0 < p.cols; b0 += xb) {
    double amax = 0;
    for (std::size_t i = b0; i < b0 + xb; ++i) amax = std::max(amax, std::fabs(static_cast<double>(p.x[i])));
    for (std::size_t i = b0; i < b0 + xb; ++i) dx[i] = amax / 127.0;
  }
  const bool exact_x = p.type == QuantType::F32 || p.type == QuantType::F16 || p.type == QuantType::BF16;
  for (std::size_t r = 0; r < p.rows; ++r) {
    double ref = 0, bound = 0, mag = 0;
    for (std::size_t i = 0; i < p.cols; ++i) {
      const double w = p.w_exact[r * p.cols + i];
      ref += w * p.x[i];
      mag += std::fabs(w * p.x[i]);
      if (!exact_x) bound += std::fabs(w) * dx[i] * 0.5;
    }
    ASSERT_LE(std::fabs(y[r] - ref), bound + 1e-5 * mag + 1e-30) << what << " " << quant_info(p.type).name << " row " << r;
  }
}

const QuantType kWeightTypes[] = {QuantType::Q4_0, QuantType::Q8_0, QuantType::Q4_K, QuantType::Q5_K,
                                  QuantType::Q6_K, QuantType::F16,  QuantType::BF16, QuantType::F32};

TEST(QuantOps, MatvecMatchesTheExactProductOnEveryBackend) {
  for (QuantType t : kWeightTypes)
    for (Backend b : available()) {
      const Problem p = make(t, 37, 512, 5);
      std::vector<float> y(p.rows);
      quant_matvec(t, p.w, p.rows, p.cols, p.x, y, b);
      expect_close(p, y, std::string(name(b)).c_str());
    }
}

TEST(QuantOps, ResultsDoNotDependOnThreadsAndBatchRowsEqualMatvec) {
  const int saved = num_threads();
  for (QuantType t : kWeightTypes) {
    const Problem p = make(t, 300, 768, 9);
    std::vector<float> y1(p.rows), y3(p.rows);
    set_num_threads(1);
    quant_matvec(t, p.w, p.rows, p.cols, p.x, y1);
    set_num_threads(3);
    quant_matvec(t, p.w, p.rows, p.cols, p.x, y3);
    ASSERT_EQ(0, std::memcmp(y1.data(), y3.data(), y1.size() * 4)) << quant_info(t).name;
    // Prefill: 5 activation rows, the third being the matvec's x.
    const std::size_t m = 5;
    std::vector<float> xs(m * p.cols), ys(m * p.rows);
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : xs) v = u(rng);
    std::copy(p.x.begin(), p.x.end(), xs.begin() + 2 * p.cols);
    quant_matmul(t, p.w, p.rows, p.cols, xs, m, ys);
    ASSERT_EQ(0, std::memcmp(ys.data() + 2 * p.rows, y3.data(), p.rows * 4)) << quant_info(t).name;
  }
  set_num_threads(saved);
}

// Every prefill path (multi-row block dots in groups of 8 lanes; AMX tiles of 16 x 16 where the CPU has
// them) against the single-row matvec, bit for bit, on every backend, with row and activation counts
// that leave partial groups and tiles.
TEST(QuantOps, EveryBatchRowEqualsItsMatvecOnEveryBackend) {
  const char* amx = std::getenv("TRUENO_AMX");
  std::printf("prefill paths checked on: %s (AMX tiles for q4_k and q6_k on avx512: %s%s)\n",
              [] {
                std::string s;
                for (Backend b : available()) s += std::string(name(b)) + " ";
                return s;
              }().c_str(),
              cpu::amx::usable() ? "used" : "not available here", amx && std::string_view(amx) == "0" ? ", disabled by TRUENO_AMX=0" : "");
  for (QuantType t : {QuantType::Q4_K, QuantType::Q5_K, QuantType::Q6_K, QuantType::Q8_0})
    for (Backend b : available()) {
      const Problem p = make(t, 300, 768, 11);
      const std::size_t m = 37;
      std::vector<float> xs(m * p.cols), ys(m * p.rows), y(p.rows);
      std::mt19937 rng(3);
      std::uniform_real_distribution<float> u(-1, 1);
      for (auto& v : xs) v = u(rng);
      quant_matmul(t, p.w, p.rows, p.cols, xs, m, ys, b);
      for (std::size_t i = 0; i < m; ++i) {
        quant_matvec(t, p.w, p.rows, p.cols, std::span<const float>(xs).subspan(i * p.cols, p.cols), y, b);
        ASSERT_EQ(0, std::memcmp(ys.data() + i * p.rows, y.data(), p.rows * 4))
            << quant_info(t).name << " on " << name(b) << ", activation row " << i;
      }
    }
}

TEST(QuantOps, GateUpSwigluIsSiluOfGateTimesUp) {
  for (QuantType t : {QuantType::Q4_K, QuantType::Q6_K, QuantType::Q8_0}) {
    const Problem g = make(t, 64, 256, 1), u = make(t, 64, 256, 2);
    std::vector<float> yg(64), yu(64), want(64), got(64);
    quant_matvec(t, g.w, 64, 256, g.x, yg);
    quant_matvec(t, u.w, 64, 256, g.x, yu);
    ops::swiglu(yg, yu, want);
    quant_gate_up_swiglu(t, g.w, u.w, 64, 256, g.x, got);
    ASSERT_EQ(0, std::memcmp(want.data(), got.data(), 64 * 4)) << quant_info(t).name;
  }
}

// Q, K and V of a decode step in one call: mixed weight types (both activation formats, a float type),
// unequal row counts; each output equals its own quant_matvec bit for bit, on every thread count.
TEST(QuantOps, MatvecMultiEqualsOneMatvecPerMatrix) {
  const std::size_t cols = 512;
  const Problem a = make(QuantType::Q4_K, 300, cols, 11), b = make(QuantType::Q6_K, 40, cols, 12),
                c = make(QuantType::Q8_0, 72, cols, 13), f = make(QuantType::F32, 9, cols, 14);
  const std::vector<const Problem*> ps = {&a, &b, &c, &f};
  std::vector<std::vector<float>> want(ps.size()), got(ps.size());
  for (std::size_t k = 0; k < ps.size(); ++k) {
    want[k].resize(ps[k]->rows), got[k].assign(ps[k]->rows, -1.0f);
    quant_matvec(ps[k]->type, ps[k]->w, ps[k]->rows, cols, a.x, want[k]);
  }
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<QuantMatvecPart> parts;
    for (std::size_t k = 0; k < ps.size(); ++k) parts.push_back({ps[k]->type, ps[k]->w, ps[k]->rows, got[k]});
    quant_matvec_multi(parts, cols, a.x);
    for (std::size_t k = 0; k < ps.size(); ++k)
      ASSERT_EQ(0, std::memcmp(want[k].data(), got[k].data(), want[k].size() * 4)) << quant_info(ps[k]->type).name << " threads " << threads;
  }
  set_num_threads(physical_cores());
  std::vector<float> bad = a.x;
  bad[7] = NAN;
  std::vector<QuantMatvecPart> one = {{a.type, a.w, a.rows, got[0]}};
  EXPECT_THROW(quant_matvec_multi(one, cols, bad), InvalidArgument);
}

TEST(QuantOps, BadArgumentsAreClearErrors) {
  const Problem p = make(QuantType::Q4_K, 4, 256, 3);
  std::vector<float> y(4), y_short(3);
  EXPECT_THROW(quant_matvec(QuantType::Q4_K, p.w, 5, 256, p.x, y), ShapeError);
  EXPECT_THROW(quant_matvec(QuantType::Q4_K, p.w, 4, 256, p.x, y_short), ShapeError);
  EXPECT_THROW(quant_matvec(QuantType::Q4_K, p.w, 4, 255, p.x, y), ShapeError);
  std::vector<float> nan_x = p.x;
  nan_x[100] = NAN;
  try {
    quant_matvec(QuantType::Q4_K, p.w, 4, 256, nan_x, y);
    FAIL() << "NaN activation accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("activation 100 is nan"), std::string::npos) << e.what();
  }
  std::vector<std::byte> w8k(4 * 292);
  EXPECT_THROW(quant_matvec(QuantType::Q8_K, w8k, 4, 256, p.x, y), InvalidArgument);
  std::vector<std::byte> wi32(4 * 256 * 4);
  try {
    quant_matvec(QuantType::I32, wi32, 4, 256, p.x, y);
    FAIL() << "i32 weights accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("not a weight format"), std::string::npos) << e.what();
  }
}

TEST(QuantOps, RealQ4KMTensorsAgreeWithTheirF16Weights) {
  const std::string dir = test::testdata_dir() + "/models/";
  const test::GgufTensors f16(dir + "tiny-llama-f16.gguf"), q(dir + "tiny-llama-q4_k_m.gguf");
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const char* name : {"blk.0.ffn_gate.weight", "blk.1.attn_q.weight", "output.weight", "blk.0.ffn_down.weight"}) {
    const auto& t = q.at(name);
    const std::size_t cols = t.ne[0], rows = t.ne[1];
    std::vector<float> x(cols), y(rows), w(rows * cols);
    for (auto& v : x) v = u(rng);
    quant_matvec(quant_type_from_id(t.type), t.data, rows, cols, x, y);
    dequantize(QuantRow::view(QuantType::F16, f16.at(name).data, rows * cols), w);
    double se = 0, ss = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      double ref = 0;
      for (std::size_t i = 0; i < cols; ++i) ref += static_cast<double>(w[r * cols + i]) * x[i];
      se += (y[r] - ref) * (y[r] - ref), ss += ref * ref;
    }
    std::cout << "[quant] " << name << " (" << quant_info(quant_type_from_id(t.type)).name
              << ") matvec relative RMSE vs f16 weights: " << std::sqrt(se / ss) << "\n";
    EXPECT_LT(std::sqrt(se / ss), 0.1) << name;
  }
}

}  // namespace
}  // namespace trueno
