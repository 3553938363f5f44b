// The backward ops (include/trueno/grad.h) against central finite differences of f64 forward functions
// on small random shapes (seed printed; TRUENO_TEST_SEED reproduces), on every available CPU tier, and
// each tier against the scalar tier.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "trueno/backend.h"
#include "trueno/error.h"
#include "trueno/grad.h"

namespace trueno::grad {
namespace {

std::uint64_t seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("TRUENO_TEST_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("[grad] seed %llu (rerun with TRUENO_TEST_SEED=%llu)\n", static_cast<unsigned long long>(v), static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

std::vector<float> randn(std::size_t n, std::mt19937_64& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

using Fn = std::function<std::vector<double>(const std::vector<double>&)>;

// d/dx_j of sum_i dy_i f(x)_i by central differences in f64.
std::vector<double> numeric(const Fn& f, const std::vector<float>& x, const std::vector<float>& dy) {
  std::vector<double> xd(x.begin(), x.end()), g(x.size());
  const double h = 1e-5;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double keep = xd[j];
    double lp = 0, lm = 0;
    xd[j] = keep + h;
    auto yp = f(xd);
    xd[j] = keep - h;
    auto ym = f(xd);
    xd[j] = keep;
    for (std::size_t i = 0; i < dy.size(); ++i) lp += dy[i] * yp[i], lm += dy[i] * ym[i];
    g[j] = (lp - lm) / (2 * h);
  }
  return g;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::string& what, double tol = 2e-3) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
  EXPECT_LE(worst, tol) << what;
}

std::string tier(Backend b) { return std::string(name(b)); }

// f64 forwards of the element-wise activations, and one softmax row.
double silu_f(double v) { return v / (1 + std::exp(-v)); }
double gelu_f(double v) { return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }
double tanh_f(double v) { return std::tanh(v); }
double sigmoid_f(double v) { return 1 / (1 + std::exp(-v)); }
Fn map(double (*f)(double)) {
  return [f](const std::vector<double>& v) {
    std::vector<double> o(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = f(v[i]);
    return o;
  };
}
std::vector<double> softmax_f(const std::vector<double>& v) {
  double m = v[0], s = 0;
  for (double t : v) m = std::max(m, t);
  std::vector<double> o(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) s += o[i] = std::exp(v[i] - m);
  for (auto& t : o) t /= s;
  return o;
}

TEST(Grad, ActivationsSoftmaxAndNormsMatchFiniteDifferences) {
  std::mt19937_64 rng(seed());
  const std::size_t n = 37;
  for (Backend b : available()) {
    const Exec e = b;
    const auto x = randn(n, rng, 1.5f), dy = randn(n, rng), w = randn(n, rng);
    std::vector<float> dx(n), y(n);
    silu(x, dy, dx, e);
    expect_close(dx, numeric(map(silu_f), x, dy), "silu " + tier(b));
    gelu_tanh(x, dy, dx, e);
    expect_close(dx, numeric(map(gelu_f), x, dy), "gelu_tanh " + tier(b));
    ops::tanh(x, y, e);
    grad::tanh(y, dy, dx, e);
    expect_close(dx, numeric(map(tanh_f), x, dy), "tanh " + tier(b));
    ops::sigmoid(x, y, e);
    grad::sigmoid(y, dy, dx, e);
    expect_close(dx, numeric(map(sigmoid_f), x, dy), "sigmoid " + tier(b));
    ops::softmax(x, y, e);
    grad::softmax(y, dy, dx, e);
    expect_close(dx, numeric(softmax_f, x, dy), "softmax " + tier(b));
    const float eps = 1e-5f;
    std::vector<float> dw(n, 0.0f), db(n, 0.0f);
    rmsnorm(x, w, eps, dy, dx, dw, e);
    const auto rms_fwd = [&](const std::vector<double>& v) {
      double ss = 0;
      for (double t : v) ss += t * t;
      const double r = 1 / std::sqrt(ss / v.size() + eps);
      std::vector<double> o(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) o[i] = v[i] * r * w[i];
      return o;
    };
    expect_close(dx, numeric(rms_fwd, x, dy), "rmsnorm dx " + tier(b));
    std::vector<double> dw_want(n);  // y_i = x_i r w_i: dw_i = dy_i x_i r
    { double ss = 0; for (float t : x) ss += double{t} * t; const double r = 1 / std::sqrt(ss / n + eps); for (std::size_t i = 0; i < n; ++i) dw_want[i] = dy[i] * x[i] * r; }
    expect_close(dw, dw_want, "rmsnorm dw " + tier(b));
    std::fill(dw.begin(), dw.end(), 0.0f);
    const auto bias = randn(n, rng);
    layernorm(x, w, eps, dy, dx, dw, db, e);
    const auto ln_fwd = [&](const std::vector<double>& v) {
      double mu = 0, var = 0;
      for (double t : v) mu += t;
      mu /= v.size();
      for (double t : v) var += (t - mu) * (t - mu);
      var /= v.size();
      const double r = 1 / std::sqrt(var + eps);
      std::vector<double> o(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) o[i] = (v[i] - mu) * r * w[i] + bias[i];
      return o;
    };
    expect_close(dx, numeric(ln_fwd, x, dy), "layernorm dx " + tier(b));
    expect_close(db, std::vector<double>(dy.begin(), dy.end()), "layernorm db " + tier(b), 1e-6);
  }
}

TEST(Grad, MatmulAttentionCrossEntropyRopeEmbedding) {
  std::mt19937_64 rng(seed() + 1);
  for (Backend b : available()) {
    const Exec e = b;
    // matmul: C = A B, loss = sum dC * C
    const std::size_t m = 5, n = 7, k = 6;
    const auto a = randn(m * k, rng), bm = randn(k * n, rng), dc = randn(m * n, rng);
    std::vector<float> da(m * k), db(k * n);
    matmul(m, n, k, a.data(), bm.data(), dc.data(), da.data(), db.data(), false, e);
    expect_close(da, numeric([&](const std::vector<double>& av) {
      std::vector<double> c(m * n, 0.0); for (std::size_t i = 0; i < m; ++i) for (std::size_t j = 0; j < n; ++j) for (std::size_t t = 0; t < k; ++t) c[i * n + j] += av[i * k + t] * bm[t * n + j]; return c; }, a, dc), "matmul dA " + tier(b));
    expect_close(db, numeric([&](const std::vector<double>& bv) {
      std::vector<double> c(m * n, 0.0); for (std::size_t i = 0; i < m; ++i) for (std::size_t j = 0; j < n; ++j) for (std::size_t t = 0; t < k; ++t) c[i * n + j] += a[i * k + t] * bv[t * n + j]; return c; }, bm, dc), "matmul dB " + tier(b));
    std::vector<float> acc = da;
    matmul(m, n, k, a.data(), bm.data(), dc.data(), acc.data(), nullptr, true, e);
    for (std::size_t i = 0; i < acc.size(); ++i) EXPECT_NEAR(acc[i], 2 * da[i], 1e-5f * (1 + std::fabs(da[i]))) << "accumulate " << tier(b);

    // attention, one head, causal
    const std::size_t T = 5, d = 4;
    const auto q = randn(T * d, rng), kk = randn(T * d, rng), v = randn(T * d, rng), dout = randn(T * d, rng);
    std::vector<float> dq(T * d), dk(T * d), dv(T * d);
    attention(T, d, q.data(), kk.data(), v.data(), dout.data(), dq.data(), dk.data(), dv.data(), e);
    const auto att = [&](const std::vector<double>& Q, const std::vector<double>& K, const std::vector<double>& V) {
      std::vector<double> o(T * d, 0.0);
      for (std::size_t t = 0; t < T; ++t) {
        std::vector<double> s(t + 1); double mx = -1e300, sum = 0;
        for (std::size_t j = 0; j <= t; ++j) { double z = 0; for (std::size_t i = 0; i < d; ++i) z += Q[t * d + i] * K[j * d + i]; s[j] = z / std::sqrt(double(d)); mx = std::max(mx, s[j]); }
        for (auto& z : s) sum += z = std::exp(z - mx);
        for (std::size_t j = 0; j <= t; ++j) for (std::size_t i = 0; i < d; ++i) o[t * d + i] += s[j] / sum * V[j * d + i];
      }
      return o; };
    const std::vector<double> Qd(q.begin(), q.end()), Kd(kk.begin(), kk.end()), Vd(v.begin(), v.end());
    expect_close(dq, numeric([&](const std::vector<double>& x) { return att(x, Kd, Vd); }, q, dout), "attention dQ " + tier(b));
    expect_close(dk, numeric([&](const std::vector<double>& x) { return att(Qd, x, Vd); }, kk, dout), "attention dK " + tier(b));
    expect_close(dv, numeric([&](const std::vector<double>& x) { return att(Qd, Kd, x); }, v, dout), "attention dV " + tier(b));

    // cross-entropy: loss and its gradient
    const auto logits = randn(9, rng, 2.0f);
    std::vector<float> dl(9);
    const float loss = cross_entropy(logits, 4, dl, 1.0f, e);
    const auto ce = [](const std::vector<double>& z) { double mx = z[0], s = 0; for (double t : z) mx = std::max(mx, t); for (double t : z) s += std::exp(t - mx); return std::vector<double>{-(z[4] - mx - std::log(s))}; };
    EXPECT_NEAR(loss, ce(std::vector<double>(logits.begin(), logits.end()))[0], 1e-5) << tier(b);
    expect_close(dl, numeric(ce, logits, {1.0f}), "cross_entropy " + tier(b));
  }
  // rope (both pairings) and embedding do not depend on the tier.
  std::mt19937_64 rng2(seed() + 2);
  for (const bool neox : {false, true}) {
    const std::size_t heads = 2, hd = 8, rd = 6, pos = 11;
    const float base = 10000.0f;
    const auto x = randn(heads * hd, rng2), dy = randn(heads * hd, rng2);
    std::vector<float> dx(x.size());
    rope(dy, heads, hd, rd, pos, base, neox, dx);
    expect_close(dx, numeric([&](const std::vector<double>& v) {
      std::vector<double> o = v;
      for (std::size_t i = 0; i < rd / 2; ++i) {
        const double th = pos * std::pow(double(base), -2.0 * i / rd), c = std::cos(th), s = std::sin(th);
        for (std::size_t h = 0; h < heads; ++h) {
          const std::size_t a = h * hd + (neox ? i : 2 * i), bb = h * hd + (neox ? i + rd / 2 : 2 * i + 1);
          o[a] = v[a] * c - v[bb] * s, o[bb] = v[a] * s + v[bb] * c;
        }
      }
      return o; }, x, dy), neox ? "rope neox" : "rope");
  }
  const std::vector<std::int32_t> ids = {2, 0, 2};
  const auto dy = randn(3 * 4, rng2);
  std::vector<float> dtable(3 * 4, 0.0f);
  embedding(ids, dy, 4, dtable);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(dtable[i], dy[4 + i]);
    EXPECT_FLOAT_EQ(dtable[8 + i], dy[i] + dy[8 + i]);  // row 2 used twice: accumulated
    EXPECT_EQ(dtable[4 + i], 0.0f);
  }
  EXPECT_THROW(embedding(std::vector<std::int32_t>{3}, std::vector<float>(4), 4, dtable), ShapeError);
}

// AdamW against its definition, step by step, and a bad call named.
TEST(Grad, AdamWFollowsItsDefinition) {
  std::vector<float> w = {1.0f, -2.0f}, m(2, 0.0f), v(2, 0.0f);
  const std::vector<float> g = {0.5f, -0.25f};
  AdamW o;
  o.lr = 0.1f, o.weight_decay = 0.1f;
  double wd[2] = {1.0, -2.0}, md[2] = {0, 0}, vd[2] = {0, 0};
  for (std::size_t t = 1; t <= 3; ++t) {
    adamw_step(w, g, m, v, t, o);
    for (int i = 0; i < 2; ++i) {
      md[i] = 0.9 * md[i] + 0.1 * g[i], vd[i] = 0.999 * vd[i] + 0.001 * g[i] * g[i];
      const double mh = md[i] / (1 - std::pow(0.9, t)), vh = vd[i] / (1 - std::pow(0.999, t));
      wd[i] -= 0.1 * (mh / (std::sqrt(vh) + 1e-8) + 0.1 * wd[i]);
      EXPECT_NEAR(w[i], wd[i], 1e-5) << "step " << t;
    }
  }
  EXPECT_THROW(adamw_step(w, g, m, v, 0, o), ShapeError);
}

// Each tier's gradients agree with the scalar tier's (the kernels under them differ by their contracts).
TEST(Grad, EveryTierAgreesWithTheScalarTier) {
  std::mt19937_64 rng(seed() + 3);
  const std::size_t m = 9, n = 33, k = 17;
  const auto a = randn(m * k, rng), bm = randn(k * n, rng), dc = randn(m * n, rng), x = randn(n, rng), w = randn(n, rng), dy = randn(n, rng);
  const auto run = [&](Exec e) {
    std::vector<float> out(m * k + k * n + 3 * n), dw(n, 0.0f);
    matmul(m, n, k, a.data(), bm.data(), dc.data(), out.data(), out.data() + m * k, false, e);
    float* rest = out.data() + m * k + k * n;
    silu(x, dy, std::span<float>(rest, n), e);
    rmsnorm(x, w, 1e-6f, dy, std::span<float>(rest + n, n), dw, e);
    std::vector<float> y(n);
    ops::softmax(x, y, e);
    softmax(y, dy, std::span<float>(rest + 2 * n, n), e);
    return out;
  };
  const auto ref = run(Backend::Scalar);
  for (Backend b : available()) {
    const auto got = run(b);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::fabs(got[i] - ref[i])) / (1.0 + std::fabs(ref[i])));
    std::printf("grad %s vs scalar: worst relative difference %.2e\n", tier(b).c_str(), worst);
    EXPECT_LE(worst, 1e-4) << tier(b);
  }
}

}  // namespace
}  // namespace trueno::grad
