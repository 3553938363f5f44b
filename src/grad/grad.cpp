// Backward ops (include/trueno/grad.h), composed from trueno's dispatched forward ops so that every CPU
// tier runs them with its own kernels; the remaining loops are short scalar passes over a row.
//
// Note [Saturated tanh]
// Where tanh saturates (|u| > ~4), 1 - t^2 and 1 + t (t -> -1) cancel: computed from a rounded t they
// carry an absolute error of a few 1e-8, which is a large relative error of a value near 1e-6, and two
// backends that round t differently then disagree by percents (seen: 6% between the CPU and NVIDIA's
// Vulkan driver). gelu_tanh's derivative takes them from e = exp(-2|u|) instead: 1 - t^2 = 4e / (1 + e)^2,
// 1 + t = 2 / (1 + e) (u >= 0) or 2e / (1 + e) (u < 0), with no cancellation. tanh's backward has only
// the output y: (1 - y)(1 + y) rounds the same way everywhere (no a*b + c for a GPU compiler to fuse),
// where 1 - y*y fused or not differs.
#include "trueno/grad.h"

#include <cmath>
#include <vector>

#include "core/strings.h"
#include "trueno/error.h"

namespace trueno::grad {
namespace {

void need(bool ok, const char* op, const std::string& what) {
  if (!ok) throw ShapeError(strcat("grad::", op, ": ", what));
}

void same(std::size_t a, std::size_t b, const char* op, const char* names) {
  need(a == b, op, strcat(names, " have ", a, " and ", b, " values"));
}

}  // namespace

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, const float* dc, float* da, float* db,
            bool accumulate, Exec e) {
  need(m > 0 && n > 0 && k > 0 && a != nullptr && b != nullptr && dc != nullptr, "matmul", "empty shape or null operand");
  std::vector<float> t, prod;
  if (da != nullptr) {  // dA[m][k] = dC[m][n] B^T[n][k]
    t.resize(n * k);
    ops::transpose(k, n, b, n, t.data(), k, e);
    prod.resize(m * k);
    ops::matmul(m, k, n, dc, n, t.data(), k, prod.data(), k, e);
    if (accumulate)
      ops::add(std::span<const float>(da, m * k), prod, std::span<float>(da, m * k), e);
    else
      std::copy(prod.begin(), prod.end(), da);
  }
  if (db != nullptr) {  // dB[k][n] = A^T[k][m] dC[m][n]
    t.resize(k * m);
    ops::transpose(m, k, a, k, t.data(), m, e);
    prod.resize(k * n);
    ops::matmul(k, n, m, t.data(), m, dc, n, prod.data(), n, e);
    if (accumulate)
      ops::add(std::span<const float>(db, k * n), prod, std::span<float>(db, k * n), e);
    else
      std::copy(prod.begin(), prod.end(), db);
  }
}

void silu(std::span<const float> x, std::span<const float> dy, std::span<float> dx, Exec e) {
  same(x.size(), dy.size(), "silu", "x and dy"), same(x.size(), dx.size(), "silu", "x and dx");
  std::vector<float> s(x.size());
  ops::sigmoid(x, s, e);  // silu' = s (1 + x (1 - s))
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = dy[i] * (s[i] * (1.0f + x[i] * (1.0f - s[i])));
}

void gelu_tanh(std::span<const float> x, std::span<const float> dy, std::span<float> dx, Exec e) {
  same(x.size(), dy.size(), "gelu_tanh", "x and dy"), same(x.size(), dx.size(), "gelu_tanh", "x and dx");
  constexpr float c = 0.7978845608028654f, a = 0.044715f;  // sqrt(2 / pi)
  // gelu = x (1 + t) / 2, t = tanh(u): gelu' = (1 + t) / 2 + x (1 - t^2) c (1 + 3 a x^2) / 2. Note
  // [Saturated tanh]: 1 + t and 1 - t^2 from e = exp(-2|u|), not from a rounded t.
  std::vector<float> u(x.size()), ev(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) u[i] = c * (x[i] + a * x[i] * x[i] * x[i]), ev[i] = -2.0f * std::fabs(u[i]);
  ops::exp(ev, ev, e);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float ei = ev[i], one_e = 1.0f + ei;
    const float one_plus_t = (u[i] >= 0.0f ? 2.0f : 2.0f * ei) / one_e, sech2 = 4.0f * ei / (one_e * one_e);
    dx[i] = dy[i] * (0.5f * one_plus_t + 0.5f * x[i] * sech2 * c * (1.0f + 3.0f * a * x[i] * x[i]));
  }
}

void tanh(std::span<const float> y, std::span<const float> dy, std::span<float> dx, Exec) {
  same(y.size(), dy.size(), "tanh", "y and dy"), same(y.size(), dx.size(), "tanh", "y and dx");
  for (std::size_t i = 0; i < y.size(); ++i) dx[i] = dy[i] * ((1.0f - y[i]) * (1.0f + y[i]));  // Note [Saturated tanh]
}

void sigmoid(std::span<const float> y, std::span<const float> dy, std::span<float> dx, Exec) {
  same(y.size(), dy.size(), "sigmoid", "y and dy"), same(y.size(), dx.size(), "sigmoid", "y and dx");
  for (std::size_t i = 0; i < y.size(); ++i) dx[i] = dy[i] * (y[i] * (1.0f - y[i]));
}

void softmax(std::span<const float> y, std::span<const float> dy, std::span<float> dx, Exec e) {
  same(y.size(), dy.size(), "softmax", "y and dy"), same(y.size(), dx.size(), "softmax", "y and dx");
  const float s = ops::dot(dy, y, e);
  for (std::size_t i = 0; i < y.size(); ++i) dx[i] = y[i] * (dy[i] - s);
}

void rmsnorm(std::span<const float> x, std::span<const float> w, float eps, std::span<const float> dy, std::span<float> dx,
             std::span<float> dw, Exec e) {
  const std::size_t n = x.size();
  need(n > 0, "rmsnorm", "empty row");
  same(n, w.size(), "rmsnorm", "x and w"), same(n, dy.size(), "rmsnorm", "x and dy"), same(n, dx.size(), "rmsnorm", "x and dx");
  same(n, dw.size(), "rmsnorm", "x and dw");
  const float r = 1.0f / std::sqrt(ops::dot(x, x, e) / static_cast<float>(n) + eps);  // 1 / rms
  // y_i = x_i r w_i: dx_j = r (g_j - x_j r^2 sum_i(g_i x_i) / n) with g = dy * w
  std::vector<float> g(n);
  ops::mul(dy, w, g, e);
  const float gx = ops::dot(g, x, e), k = r * r * r * gx / static_cast<float>(n);
  for (std::size_t j = 0; j < n; ++j) dx[j] = r * g[j] - k * x[j], dw[j] += dy[j] * x[j] * r;
}

void layernorm(std::span<const float> x, std::span<const float> w, float eps, std::span<const float> dy, std::span<float> dx,
               std::span<float> dw, std::span<float> db, Exec e) {
  const std::size_t n = x.size();
  need(n > 0, "layernorm", "empty row");
  same(n, w.size(), "layernorm", "x and w"), same(n, dy.size(), "layernorm", "x and dy"), same(n, dx.size(), "layernorm", "x and dx");
  same(n, dw.size(), "layernorm", "x and dw"), same(n, db.size(), "layernorm", "x and db");
  const float mean = ops::mean(x, e), var = ops::variance(x, e), r = 1.0f / std::sqrt(var + eps);
  std::vector<float> xh(n), g(n);
  for (std::size_t i = 0; i < n; ++i) xh[i] = (x[i] - mean) * r;
  ops::mul(dy, w, g, e);
  // dx = r (g - mean(g) - xh mean(g xh))
  const float mg = ops::mean(g, e), mgx = ops::dot(g, xh, e) / static_cast<float>(n);
  for (std::size_t i = 0; i < n; ++i) dx[i] = r * (g[i] - mg - xh[i] * mgx), dw[i] += dy[i] * xh[i], db[i] += dy[i];
}

float cross_entropy(std::span<const float> logits, std::size_t target, std::span<float> dlogits, float scale, Exec e) {
  need(target < logits.size(), "cross_entropy", strcat("target ", target, " outside ", logits.size(), " classes"));
  same(logits.size(), dlogits.size(), "cross_entropy", "logits and dlogits");
  std::vector<float> ls(logits.size());
  ops::log_softmax(logits, ls, e);
  for (std::size_t i = 0; i < ls.size(); ++i) dlogits[i] = scale * (std::exp(ls[i]) - (i == target ? 1.0f : 0.0f));
  return -ls[target];
}

void rope(std::span<const float> dy, std::size_t heads, std::size_t head_dim, std::size_t rope_dim, std::size_t pos, float base,
          bool neox, std::span<float> dx) {
  need(rope_dim % 2 == 0 && rope_dim <= head_dim && heads > 0, "rope", strcat("rope_dim ", rope_dim, ", head_dim ", head_dim));
  same(dy.size(), heads * head_dim, "rope", "dy and heads x head_dim"), same(dy.size(), dx.size(), "rope", "dy and dx");
  std::copy(dy.begin(), dy.end(), dx.begin());
  const std::size_t half = rope_dim / 2;
  for (std::size_t i = 0; i < half; ++i) {
    const double theta = static_cast<double>(pos) * std::pow(static_cast<double>(base), -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim));
    const float c = static_cast<float>(std::cos(theta)), s = static_cast<float>(std::sin(theta));
    for (std::size_t h = 0; h < heads; ++h) {
      float* p = dx.data() + h * head_dim;
      const std::size_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
      const float g0 = p[a], g1 = p[b];  // the transpose of [[c, -s], [s, c]]
      p[a] = g0 * c + g1 * s, p[b] = -g0 * s + g1 * c;
    }
  }
}

void embedding(std::span<const std::int32_t> ids, std::span<const float> dy, std::size_t dim, std::span<float> dtable) {
  need(dim > 0 && dtable.size() % dim == 0, "embedding", strcat("a table of ", dtable.size(), " values in rows of ", dim));
  same(dy.size(), ids.size() * dim, "embedding", "dy and ids x dim");
  const std::size_t rows = dtable.size() / dim;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    need(ids[t] >= 0 && static_cast<std::size_t>(ids[t]) < rows, "embedding", strcat("id ", ids[t], " outside ", rows, " rows"));
    float* row = dtable.data() + static_cast<std::size_t>(ids[t]) * dim;
    for (std::size_t i = 0; i < dim; ++i) row[i] += dy[t * dim + i];
  }
}

void attention(std::size_t T, std::size_t d, const float* q, const float* k, const float* v, const float* dout, float* dq, float* dk,
               float* dv, Exec e) {
  need(T > 0 && d > 0, "attention", "empty shape");
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> s(T * T), p(T * T, 0.0f), dp(T * T), ds(T * T, 0.0f), kt(d * T);
  ops::transpose(T, d, k, d, kt.data(), T, e);
  ops::matmul(T, T, d, q, d, kt.data(), T, s.data(), T, e);  // S = Q K^T
  for (std::size_t t = 0; t < T; ++t) {                       // P = softmax of the row's first t + 1 scores
    ops::scale(std::span<const float>(s.data() + t * T, t + 1), scale, std::span<float>(s.data() + t * T, t + 1), e);
    ops::softmax(std::span<const float>(s.data() + t * T, t + 1), std::span<float>(p.data() + t * T, t + 1), e);
  }
  matmul(T, d, T, p.data(), v, dout, nullptr, dv, false, e);  // O = P V: dV = P^T dO, dP = dO V^T
  std::vector<float> vt(d * T);
  ops::transpose(T, d, v, d, vt.data(), T, e);
  ops::matmul(T, T, d, dout, d, vt.data(), T, dp.data(), T, e);
  for (std::size_t t = 0; t < T; ++t) {  // dS = softmax' (causal part), times the scale
    softmax(std::span<const float>(p.data() + t * T, t + 1), std::span<const float>(dp.data() + t * T, t + 1),
            std::span<float>(ds.data() + t * T, t + 1), e);
    ops::scale(std::span<const float>(ds.data() + t * T, t + 1), scale, std::span<float>(ds.data() + t * T, t + 1), e);
  }
  matmul(T, T, d, q, kt.data(), ds.data(), dq, nullptr, false, e);  // S = Q K^T: dQ = dS K
  std::vector<float> dkt(d * T);
  matmul(T, T, d, q, kt.data(), ds.data(), nullptr, dkt.data(), false, e);  // d(K^T) = Q^T dS
  ops::transpose(d, T, dkt.data(), T, dk, d, e);
}

void adamw_step(std::span<float> w, std::span<const float> g, std::span<float> m, std::span<float> v, std::size_t t, const AdamW& o) {
  same(w.size(), g.size(), "adamw_step", "w and g"), same(w.size(), m.size(), "adamw_step", "w and m");
  same(w.size(), v.size(), "adamw_step", "w and v");
  need(t >= 1, "adamw_step", "steps count from 1");
  const float c1 = 1.0f - std::pow(o.beta1, static_cast<float>(t)), c2 = 1.0f - std::pow(o.beta2, static_cast<float>(t));
  for (std::size_t i = 0; i < w.size(); ++i) {
    m[i] = o.beta1 * m[i] + (1.0f - o.beta1) * g[i];
    v[i] = o.beta2 * v[i] + (1.0f - o.beta2) * g[i] * g[i];
    w[i] -= o.lr * ((m[i] / c1) / (std::sqrt(v[i] / c2) + o.eps) + o.weight_decay * w[i]);
  }
}

}  // namespace trueno::grad
