// The backward ops on device tensors (trueno::grad on DeviceTensor: norms, cross-entropy, RoPE, embedding,
// attention, AdamW) against the host forms of include/trueno/grad.h, shared by src/vulkan and src/cuda's
// tests; each checked by its contract `tensor_<op>` in contracts/gpu/<backend>.yaml.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "trueno/device_ops.h"
#include "trueno/grad.h"

namespace trueno::test {

inline std::string rows_of(std::size_t rows, std::size_t n) { return std::to_string(rows) + " rows of " + std::to_string(n); }

inline std::vector<float> joined(std::initializer_list<const std::vector<float>*> parts) {
  std::vector<float> all;
  for (const auto* p : parts) all.insert(all.end(), p->begin(), p->end());
  return all;
}

// rmsnorm and layernorm: dx, and dw (db) both allocated (the gradient alone) and accumulated into given ones.
inline void check_norm_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (const auto& [rows, n] : {std::pair<std::size_t, std::size_t>{1, 1}, {7, 300}, {33, 4096}}) {
    const std::vector<float> x = random_normal(rows * n, rng, 2.0f), w = random_normal(n, rng), dy = random_normal(rows * n, rng);
    const std::vector<float> dw0 = random_normal(n, rng), db0 = random_normal(n, rng);
    const float eps = 1e-5f;
    for (const bool layer : {false, true}) {
      for (const bool accumulate : {false, true}) {
        std::vector<float> dx(rows * n), dw = accumulate ? dw0 : std::vector<float>(n), db = accumulate ? db0 : std::vector<float>(n);
        for (std::size_t r = 0; r < rows; ++r) {
          const auto row = [&](const std::vector<float>& v) { return std::span(v).subspan(r * n, n); };
          if (layer) grad::layernorm(row(x), w, eps, row(dy), std::span(dx).subspan(r * n, n), dw, db);
          else grad::rmsnorm(row(x), w, eps, row(dy), std::span(dx).subspan(r * n, n), dw);
        }
        const DeviceTensor gx = DeviceTensor::upload(d, x, {rows, n}), gw = DeviceTensor::upload(d, w), gdy = DeviceTensor::upload(d, dy, {rows, n});
        DeviceTensor gdx, gdw, gdb;
        if (accumulate) gdw = DeviceTensor::upload(d, dw0), gdb = DeviceTensor::upload(d, db0);
        if (layer) grad::layernorm(gx, gw, eps, gdy, gdx, gdw, gdb);
        else grad::rmsnorm(gx, gw, eps, gdy, gdx, gdw);
        const std::string what = rows_of(rows, n) + (accumulate ? ", accumulating" : "");
        const std::string op = layer ? "tensor_layernorm_backward" : "tensor_rmsnorm_backward";
        if (n == 1) {
          // A row of one value: dx is w dy r (1 - x^2 r^2) for rmsnorm and 0 for layernorm, what is left when
          // terms of size |w dy r| cancel (r = 1 / sqrt(x^2 + eps), or 1 / sqrt(eps) for layernorm, whose
          // variance is 0), so both sides hold rounding alone (NVIDIA's fused multiply-adds leave other bits
          // than the CPU): bounded absolutely by those terms' size.
          const std::vector<float> g = gdx.download();
          for (std::size_t r = 0; r < rows; ++r) {
            const double terms = std::abs(double{w[0]} * dy[r]) / std::sqrt((layer ? 0.0 : double{x[r]} * x[r]) + eps);
            std::printf("%s %s: dx %.3e, cpu %.3e, terms %.3e\n", op.c_str(), what.c_str(), g[r], dx[r], terms);
            EXPECT_LE(std::abs(double{g[r]} - dx[r]), 16 * 1.1920929e-7 * terms) << op << " " << what << ": dx";
          }
        } else {
          expect_gpu_contract(backend, op, gdx.download(), dx, what + ": dx");
        }
        expect_gpu_contract(backend, op, gdw.download(), dw, what + ": dw");
        if (layer) expect_gpu_contract(backend, op, gdb.download(), db, what + ": db");
      }
    }
  }
}

inline void check_cross_entropy(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (const auto& [rows, n] : {std::pair<std::size_t, std::size_t>{1, 1}, {7, 300}, {33, 32000}}) {
    const std::vector<float> logits = random_normal(rows * n, rng, 3.0f);
    std::vector<std::int32_t> targets(rows);
    for (auto& t : targets) t = static_cast<std::int32_t>(rng() % n);
    const float scale = 1.0f / static_cast<float>(rows);
    std::vector<float> dlogits(rows * n), loss(rows);
    for (std::size_t r = 0; r < rows; ++r)
      loss[r] = grad::cross_entropy(std::span(logits).subspan(r * n, n), targets[r], std::span(dlogits).subspan(r * n, n), scale);
    DeviceTensor gloss, gdlogits;
    grad::cross_entropy(DeviceTensor::upload(d, logits, {rows, n}), DeviceTensor::upload_ids(d, targets), gloss, gdlogits, scale);
    expect_gpu_contract(backend, "tensor_cross_entropy", gloss.download(), loss, rows_of(rows, n) + ": loss");
    expect_gpu_contract(backend, "tensor_cross_entropy", gdlogits.download(), dlogits, rows_of(rows, n) + ": dlogits");
  }
}

inline void check_rope_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  struct Case {
    std::size_t rows, heads, head_dim, rope_dim, pos;
    bool neox;
  };
  for (const Case c : {Case{1, 1, 2, 2, 0, false}, Case{9, 4, 64, 64, 3, false}, Case{5, 2, 128, 64, 1000, true}}) {
    const std::size_t n = c.heads * c.head_dim;
    const std::vector<float> dy = random_normal(c.rows * n, rng);
    std::vector<float> dx(c.rows * n);
    for (std::size_t r = 0; r < c.rows; ++r)
      grad::rope(std::span(dy).subspan(r * n, n), c.heads, c.head_dim, c.rope_dim, c.pos + r, 10000.0f, c.neox, std::span(dx).subspan(r * n, n));
    DeviceTensor gdx;
    grad::rope(DeviceTensor::upload(d, dy, {c.rows, n}), c.heads, c.rope_dim, c.pos, 10000.0f, c.neox, gdx);
    expect_gpu_contract(backend, "tensor_rope_backward", gdx.download(), dx,
                        rows_of(c.rows, n) + " from position " + std::to_string(c.pos) + (c.neox ? " (neox)" : ""));
  }
}

// Repeated ids (several tokens into one row) and a table row no token uses; overwriting and accumulating.
inline void check_embedding_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (const auto& [tokens, rows, dim] : {std::tuple<std::size_t, std::size_t, std::size_t>{1, 1, 1}, {50, 7, 300}, {300, 1000, 64}}) {
    std::vector<std::int32_t> ids(tokens);
    for (auto& id : ids) id = static_cast<std::int32_t>(rng() % rows);
    const std::vector<float> dy = random_normal(tokens * dim, rng), table0 = random_normal(rows * dim, rng);
    for (const bool accumulate : {false, true}) {
      std::vector<float> dtable = accumulate ? table0 : std::vector<float>(rows * dim);
      grad::embedding(ids, dy, dim, dtable);
      DeviceTensor g;
      if (accumulate) g = DeviceTensor::upload(d, table0, {rows, dim});
      grad::embedding(DeviceTensor::upload_ids(d, ids), DeviceTensor::upload(d, dy, {tokens, dim}), g, rows);
      expect_gpu_contract(backend, "tensor_embedding_backward", g.download(), dtable,
                          std::to_string(tokens) + " tokens into " + rows_of(rows, dim) + (accumulate ? ", accumulating" : ""));
    }
  }
}

inline void check_attention_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (const auto& [T, dim] : {std::pair<std::size_t, std::size_t>{1, 1}, {17, 8}, {70, 64}}) {
    const std::vector<float> q = random_normal(T * dim, rng), k = random_normal(T * dim, rng), v = random_normal(T * dim, rng);
    const std::vector<float> dout = random_normal(T * dim, rng);
    std::vector<float> dq(T * dim), dk(T * dim), dv(T * dim);
    grad::attention(T, dim, q.data(), k.data(), v.data(), dout.data(), dq.data(), dk.data(), dv.data());
    const auto up = [&](const std::vector<float>& h) { return DeviceTensor::upload(d, h, {T, dim}); };
    DeviceTensor gq, gk, gv;
    grad::attention(up(q), up(k), up(v), up(dout), gq, gk, gv);
    const std::string what = "T=" + std::to_string(T) + " d=" + std::to_string(dim);
    expect_gpu_contract(backend, "tensor_attention_backward", gq.download(), dq, what + ": dq");
    expect_gpu_contract(backend, "tensor_attention_backward", gk.download(), dk, what + ": dk");
    expect_gpu_contract(backend, "tensor_attention_backward", gv.download(), dv, what + ": dv");
  }
}

// Five steps from the same weights, gradients fresh each step: w, m and v after each.
inline void check_adamw(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{65537}}) {
    std::vector<float> w = random_normal(n, rng), m(n, 0.0f), v(n, 0.0f);
    DeviceTensor gw = DeviceTensor::upload(d, w), gm = DeviceTensor::upload(d, m), gv = DeviceTensor::upload(d, v);
    grad::AdamW o;
    o.lr = 0.01f, o.weight_decay = 0.1f;
    for (std::size_t t = 1; t <= 5; ++t) {
      const std::vector<float> g = random_normal(n, rng);
      grad::adamw_step(w, g, m, v, t, o);
      grad::adamw_step(gw, DeviceTensor::upload(d, g), gm, gv, t, o);
      const std::vector<float> dw = gw.download(), dm = gm.download(), dv = gv.download();
      expect_gpu_contract(backend, "tensor_adamw_step", joined({&dw, &dm, &dv}), joined({&w, &m, &v}),
                          "n=" + std::to_string(n) + " step " + std::to_string(t) + ": w, m, v");
    }
  }
}

// grad::bias: the column sums of dy, rows added in order from 0 or from the given db (accumulating), so
// the host loop below gives the same bits. Few columns of many rows, and many columns (several workgroups).
inline void check_bias_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (const auto& [rows, n] : {std::pair<std::size_t, std::size_t>{1, 1}, {1000, 3}, {7, 300}, {5, 70000}}) {
    const std::vector<float> dy = random_normal(rows * n, rng), start = random_normal(n, rng);
    const DeviceTensor ddy = DeviceTensor::upload(d, dy, {rows, n});
    for (bool accumulate : {false, true}) {
      std::vector<float> cpu = accumulate ? start : std::vector<float>(n, 0.0f);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < n; ++j) cpu[j] += dy[r * n + j];
      DeviceTensor db = DeviceTensor::upload(d, start);  // overwritten unless accumulating
      grad::bias(ddy, db, accumulate);
      expect_gpu_contract(backend, "tensor_bias_backward", db.download(), cpu,
                          std::to_string(rows) + " rows of " + std::to_string(n) + (accumulate ? " accumulating" : ""));
    }
  }
}

inline void check_training_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  check_norm_backward(d, backend, rng);
  check_cross_entropy(d, backend, rng);
  check_rope_backward(d, backend, rng);
  check_embedding_backward(d, backend, rng);
  check_bias_backward(d, backend, rng);
  check_attention_backward(d, backend, rng);
  check_adamw(d, backend, rng);
}

}  // namespace trueno::test
