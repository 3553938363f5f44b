// PackedQuantMatrix through the public API: every decode call with packed rows equals the call without,
// bit for bit, on every tier that packs, for row counts that leave a tail and for 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "trueno/quant.h"
#include "trueno/threads.h"
#include "trueno/trueno.h"

namespace trueno {
namespace {

std::vector<std::byte> random_matrix(QuantType t, std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.02f);
  const std::size_t rb = quant_row_bytes(t, cols);
  std::vector<std::byte> w(rows * rb);
  std::vector<float> row(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = g(rng);
    quantize(t, row, std::span<std::byte>(w.data() + r * rb, rb));
  }
  return w;
}

std::vector<float> random_x(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

TEST(PackedQuantMatrix, PacksExactlyWhereAFastKernelExists) {
  for (QuantType t : {QuantType::Q4_K, QuantType::Q6_K}) {
    const auto w = random_matrix(t, 16, 256, 1);
    for (Backend b : available())
      EXPECT_EQ(PackedQuantMatrix::pack(t, w, 16, 256, b).has_value(),
                b == Backend::AVX2 || b == Backend::AVX512 || (b == Backend::WasmSIMD && t == QuantType::Q4_K))
          << quant_info(t).name << " " << name(b);
    EXPECT_THROW(PackedQuantMatrix::pack(t, std::span(w).first(100), 16, 256), ShapeError);
  }
  const auto q5 = random_matrix(QuantType::Q5_K, 16, 256, 2);
  for (Backend b : available()) EXPECT_FALSE(PackedQuantMatrix::pack(QuantType::Q5_K, q5, 16, 256, b).has_value()) << name(b);
}

class PackedDecode : public ::testing::TestWithParam<QuantType> {};

TEST_P(PackedDecode, CallsEqualTheUnpackedCalls) {
  const QuantType t = GetParam();
  const int saved = num_threads();
  struct Shape {
    std::size_t rows, cols;
  };
  const Shape shapes[] = {{8, 256}, {5, 256}, {37, 512}, {64, 768}, {300, 1024}, {2051, 256}};
  for (Backend b : available())
    for (const Shape& s : shapes) {
      const auto wg = random_matrix(t, s.rows, s.cols, 3), wu = random_matrix(t, s.rows, s.cols, 4);
      const auto pg = PackedQuantMatrix::pack(t, wg, s.rows, s.cols, b);
      const auto pu = PackedQuantMatrix::pack(t, wu, s.rows, s.cols, b);
      if (!pg) continue;  // this tier keeps the single-row dot
      ASSERT_EQ(pg->packed_rows(), s.rows / 8 * 8);
      // The other type, as a third part of quant_matvec_multi (decode: Q4_K wq, wk beside a Q6_K wv), packed
      // where the tier packs it (WebAssembly SIMD128 packs Q4_K only).
      const QuantType other = t == QuantType::Q4_K ? QuantType::Q6_K : QuantType::Q4_K;
      const auto wo = random_matrix(other, s.rows, s.cols, 6);
      const auto po = PackedQuantMatrix::pack(other, wo, s.rows, s.cols, b);
      ASSERT_EQ(po.has_value(), b != Backend::WasmSIMD);
      const auto x = random_x(s.cols, 5);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const std::string what = std::string(quant_info(t).name) + " " + std::string(name(b)) + " rows " +
                                 std::to_string(s.rows) + " cols " + std::to_string(s.cols) + " threads " +
                                 std::to_string(threads);
        std::vector<float> want(s.rows), got(s.rows, -1.0f);
        quant_matvec(t, wg, s.rows, s.cols, x, want, b);
        quant_matvec(*pg, x, got, b);
        ASSERT_TRUE(same_bits(want, got)) << "quant_matvec, " << what;

        std::vector<float> swiglu_want(s.rows), swiglu_got(s.rows, -1.0f), swiglu_half(s.rows, -1.0f);
        quant_gate_up_swiglu(t, wg, wu, s.rows, s.cols, x, swiglu_want, b);
        quant_gate_up_swiglu(t, wg, wu, s.rows, s.cols, x, swiglu_got, b, &*pg, &*pu);
        quant_gate_up_swiglu(t, wg, wu, s.rows, s.cols, x, swiglu_half, b, nullptr, &*pu);
        ASSERT_TRUE(same_bits(swiglu_want, swiglu_got)) << "quant_gate_up_swiglu, " << what;
        ASSERT_TRUE(same_bits(swiglu_want, swiglu_half)) << "quant_gate_up_swiglu, only up packed, " << what;

        // Multi: a packed part beside an unpacked one and a packed one of the other type.
        std::vector<float> up_want(s.rows), other_want(s.rows), a(s.rows, -1.0f), c(s.rows, -1.0f), e(s.rows, -1.0f);
        quant_matvec(t, wu, s.rows, s.cols, x, up_want, b);
        quant_matvec(other, wo, s.rows, s.cols, x, other_want, b);
        const QuantMatvecPart parts[3] = {
            {t, wg, s.rows, a, &*pg}, {t, wu, s.rows, c}, {other, wo, s.rows, e, po ? &*po : nullptr}};
        quant_matvec_multi(parts, s.cols, x, b);
        ASSERT_TRUE(same_bits(want, a)) << "quant_matvec_multi packed part, " << what;
        ASSERT_TRUE(same_bits(up_want, c)) << "quant_matvec_multi unpacked part, " << what;
        ASSERT_TRUE(same_bits(other_want, e)) << "quant_matvec_multi packed " << quant_info(other).name << " part, " << what;
      }
      // A packed matrix passed with other weights is an error, not a silent wrong result.
      std::vector<float> out(s.rows);
      EXPECT_THROW(quant_gate_up_swiglu(t, wg, wu, s.rows, s.cols, x, out, b, &*pu, nullptr), InvalidArgument);
    }
  set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(KQuants, PackedDecode, ::testing::Values(QuantType::Q4_K, QuantType::Q6_K),
                         [](const ::testing::TestParamInfo<QuantType>& i) { return std::string(quant_info(i.param).name); });

}  // namespace
}  // namespace trueno
