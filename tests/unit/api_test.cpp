// The public API: Vector/Matrix, per-call and per-object forcing, size checks, aliasing, strides.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "trueno/trueno.h"

namespace trueno {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Api, VectorOpsOnEveryBackend) {
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    Vector x{1, 2, 3}, y{4, 5, 6};
    x.on(b), y.on(b);
    EXPECT_EQ(Vector::dot(x, y), 32.0f);
    const Vector s = Vector::add(x, y);
    EXPECT_EQ(s[0], 5.0f);
    EXPECT_EQ(s[2], 9.0f);
    EXPECT_EQ(s.backend(), b);
    EXPECT_EQ(x.scale(2.0f)[1], 4.0f);
    EXPECT_EQ(x.sum(), 6.0f);
    EXPECT_EQ(x.argmax(), 2u);
    EXPECT_FLOAT_EQ(x.mean(), 2.0f);
    EXPECT_FLOAT_EQ(x.variance(), 2.0f / 3.0f);
    EXPECT_FLOAT_EQ(x.norm_l2(), std::sqrt(14.0f));
    const Vector p = x.softmax();
    EXPECT_NEAR(p.sum(), 1.0f, 1e-6f);
    EXPECT_GT(p[2], p[1]);
  }
}

TEST(Api, PerCallForcingUsesThatBackend) {
  std::vector<float> a(100, 1.0f), out(100);
  for (Backend b : available()) {
    ops::scale(a, 3.0f, out, b);
    EXPECT_EQ(out[99], 3.0f);
  }
#if defined(__wasm__)
  EXPECT_THROW(ops::scale(a, 3.0f, out, Backend::AVX2), BackendUnavailable);  // never in a WebAssembly build
#else
  EXPECT_THROW(ops::scale(a, 3.0f, out, Backend::WasmSIMD), BackendUnavailable);  // never in a native build
#endif
}

TEST(Api, ObjectsForcedToDifferentBackendsAreAnError) {
  const auto av = available();
  if (av.size() < 2) GTEST_SKIP() << "skipped: needs two available backends";
  Vector x{1, 2}, y{3, 4};
  x.on(av[0]), y.on(av[1]);
  const std::string msg = message_of([&] { Vector::add(x, y); });
  EXPECT_NE(msg.find("different backends"), std::string::npos) << msg;
}

TEST(Api, SizeMismatchNamesOpAndSizes) {
  std::vector<float> a(3), b(4), out(3);
  const std::string msg = message_of([&] { ops::add(a, b, out); });
  EXPECT_NE(msg.find("add"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a: 3, b: 4, out: 3"), std::string::npos) << msg;
  EXPECT_THROW(ops::dot(a, b), ShapeError);
  EXPECT_THROW(Matrix::matmul(Matrix(2, 3), Matrix(2, 3)), ShapeError);
  EXPECT_THROW(Matrix(2, 3).matvec(Vector(2)), ShapeError);
  EXPECT_THROW(Matrix::from(2, 2, std::vector<float>(3)), ShapeError);
}

TEST(Api, EmptyInputWhereUndefinedIsAnError) {
  const std::vector<float> empty;
  EXPECT_THROW(ops::max(empty), InvalidArgument);
  EXPECT_THROW(ops::argmin(empty), InvalidArgument);
  EXPECT_THROW(ops::mean(empty), InvalidArgument);
  EXPECT_THROW(ops::variance(empty), InvalidArgument);
  EXPECT_EQ(ops::sum(empty), 0.0f);
  EXPECT_EQ(ops::norm_l2(empty), 0.0f);
  const std::string msg = message_of([&] { ops::max(empty); });
  EXPECT_NE(msg.find("max"), std::string::npos);
}

TEST(Api, InPlaceWorksAndPartialOverlapIsRejected) {
  for (Backend b : available()) {
    std::vector<float> v(37);
    std::iota(v.begin(), v.end(), 0.0f);
    ops::add(v, v, v, b);
    EXPECT_EQ(v[36], 72.0f);
    ops::softmax(v, v, b);
    EXPECT_NEAR(std::accumulate(v.begin(), v.end(), 0.0), 1.0, 1e-5);
    std::span<float> s(v);
    EXPECT_THROW(ops::exp(s.subspan(0, 30), s.subspan(1, 30), b), InvalidArgument);
  }
  std::vector<float> one(1), two(2), out2(2);
  EXPECT_THROW(ops::clamp(one, 2.0f, 1.0f, one), InvalidArgument);
  EXPECT_THROW(ops::rmsnorm(two, two, -1.0f, out2), InvalidArgument);
}

TEST(Api, StridedViews) {
  // Every other element of a, every third of b, written to every second of out.
  std::vector<float> a(20), b(30), out(20, -1.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 100.0f);
  ops::add(Strided<const float>{a.data(), 10, 2}, Strided<const float>{b.data(), 10, 3},
           Strided<float>{out.data(), 10, 2});
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(out[2 * i], a[2 * i] + b[3 * i]);
    EXPECT_EQ(out[2 * i + 1], -1.0f);
  }
  // Negative stride: a reversed.
  EXPECT_EQ(ops::dot(Strided<const float>{a.data() + 19, 20, -1}, Strided<const float>{a.data(), 20, 1}),
            std::inner_product(a.rbegin(), a.rend(), a.begin(), 0.0f));
  EXPECT_EQ(ops::max(Strided<const float>{a.data(), 7, 3}), 18.0f);
  EXPECT_THROW(ops::exp(Strided<const float>{a.data(), 5, 1}, Strided<float>{out.data(), 4, 1}), ShapeError);
  // A column of a row-major 3x4 matrix, in place.
  std::vector<float> m{-1, 0, 0, 0, 2, 0, 0, 0, -3, 0, 0, 0};
  ops::relu(Strided<const float>{m.data(), 3, 4}, Strided<float>{m.data(), 3, 4});
  EXPECT_EQ(m[0], 0.0f);
  EXPECT_EQ(m[4], 2.0f);
  EXPECT_EQ(m[8], 0.0f);
  EXPECT_EQ(ops::argmax(Strided<const float>{a.data() + 19, 20, -1}), 0u);  // a reversed: max first
  EXPECT_EQ(ops::mean(Strided<const float>{a.data(), 3, 5}), 5.0f);        // 0, 5, 10
}

TEST(Api, MatrixOps) {
  const Matrix a = Matrix::from(2, 3, std::vector<float>{1, 2, 3, 4, 5, 6});
  const Matrix b = Matrix::from(3, 2, std::vector<float>{7, 8, 9, 10, 11, 12});
  for (Backend be : available()) {
    Matrix ab = a, bb = b;
    ab.on(be), bb.on(be);
    const Matrix c = Matrix::matmul(ab, bb);
    EXPECT_EQ(c(0, 0), 58.0f);
    EXPECT_EQ(c(0, 1), 64.0f);
    EXPECT_EQ(c(1, 0), 139.0f);
    EXPECT_EQ(c(1, 1), 154.0f);
    const Vector y = ab.matvec(Vector{1, 1, 1});
    EXPECT_EQ(y[0], 6.0f);
    EXPECT_EQ(y[1], 15.0f);
    const Matrix t = ab.transpose();
    EXPECT_EQ(t.rows(), 3u);
    EXPECT_EQ(t(2, 1), 6.0f);
  }
}

TEST(Api, HalfConversionsRoundTrip) {
  const Vector x{1.0f, -2.5f, 65504.0f, 1e-7f};
  const auto h = x.to_f16();
  EXPECT_EQ(h[0], 0x3c00);
  EXPECT_EQ(h[2], 0x7bff);
  const Vector back = Vector::from_f16(h);
  EXPECT_EQ(back[1], -2.5f);
  const auto bf = x.to_bf16();
  EXPECT_EQ(bf[0], 0x3f80);
  EXPECT_EQ(Vector::from_bf16(bf)[1], -2.5f);
}

}  // namespace
}  // namespace trueno
