// Backward ops (issue 22): the gradients of trueno's forward ops that training needs. Each takes the
// forward's inputs (or its output, where that is cheaper), the gradient of the loss with respect to the
// output (dy), and writes the gradient with respect to each input; gradients of parameters that several
// rows share (weights, embedding rows) are accumulated. They are built from trueno's dispatched ops
// (matmul, transpose, element-wise, reductions), so they run on every CPU tier; Exec forces a tier as
// for trueno::ops. Checked against f64 finite differences (src/grad/grad_test.cpp), and a two-layer
// network trains with them on every tier (src/grad/train_test.cpp). Sizes are checked (ShapeError).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "trueno/device_tensor.h"
#include "trueno/ops.h"

namespace trueno::grad {

// C[m][n] = A[m][k] B[k][n] (row-major, dense): dA = dC B^T [m][k], dB = A^T dC [k][n]; either output may
// be null (not wanted). accumulate adds into da, db instead of overwriting them.
void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, const float* dc, float* da, float* db,
            bool accumulate = false, Exec e = {});

// The same on device tensors (device_tensor.h; a, b, dc f32 on one device): enqueued like the device ops
// (two GEMMs: cuBLAS on CUDA, matmul.comp on Vulkan). An empty *da / *db is allocated on the operands'
// device (accumulate then needs a given one); either pointer may be null.
void matmul(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& dc, DeviceTensor* da, DeviceTensor* db,
            bool accumulate = false);

// The activations' and softmax's backward on device tensors (f32, equal shapes, one device; softmax: rows of
// the last dimension), as the host forms below; dx may be empty (allocated) or a tensor of the shape.
void silu(const DeviceTensor& x, const DeviceTensor& dy, DeviceTensor& dx);
void gelu_tanh(const DeviceTensor& x, const DeviceTensor& dy, DeviceTensor& dx);
void tanh(const DeviceTensor& y, const DeviceTensor& dy, DeviceTensor& dx);
void sigmoid(const DeviceTensor& y, const DeviceTensor& dy, DeviceTensor& dx);
void softmax(const DeviceTensor& y, const DeviceTensor& dy, DeviceTensor& dx);

// The rest on device tensors (f32 unless said, one device), each as the host form below applied to every
// row. Parameter gradients (dw, db, dtable) are accumulated into a given tensor, as on the host, or an
// empty one is allocated and holds the gradient alone. Deterministic: the same inputs give the same bits
// (no atomics; parameter gradients sum the rows in order, Note [Deterministic parameter gradients] in
// src/api/device_grad.cpp).
//   x, dy [rows][n]; w, dw (, b, db) [n]; dx may be empty.
void rmsnorm(const DeviceTensor& x, const DeviceTensor& w, float eps, const DeviceTensor& dy, DeviceTensor& dx, DeviceTensor& dw);
void layernorm(const DeviceTensor& x, const DeviceTensor& w, float eps, const DeviceTensor& dy, DeviceTensor& dx, DeviceTensor& dw,
               DeviceTensor& db);
// logits [rows][classes], targets i32 [rows] (DeviceTensor::upload_ids): loss [rows] each row's
// -log softmax[target] (ops::sum for the total), dlogits = scale (softmax - onehot). A target outside
// the classes cannot be reported from the device: its row's loss is NaN.
void cross_entropy(const DeviceTensor& logits, const DeviceTensor& targets, DeviceTensor& loss, DeviceTensor& dlogits, float scale = 1.0f);
// dy [rows][heads * head_dim], row r at position pos + r.
void rope(const DeviceTensor& dy, std::size_t heads, std::size_t rope_dim, std::size_t pos, float base, bool neox, DeviceTensor& dx);
// ids i32 [tokens], dy [tokens][dim] -> dtable [rows][dim] (an empty dtable needs `rows`); an id outside
// the table is skipped (the device cannot throw).
void embedding(const DeviceTensor& ids, const DeviceTensor& dy, DeviceTensor& dtable, std::size_t rows = 0);
// dy [rows][n] -> db [n], the column sums of dy: the gradient of ops::add_bias's bias (one thread per
// column adding the rows in order: the host's bits for the same order). Like grad::matmul, whose
// product-with-ones it replaces, a given db is overwritten unless `accumulate` (which needs a given db).
void bias(const DeviceTensor& dy, DeviceTensor& db, bool accumulate = false);
// q, k, v, dout [T][d] -> dq, dk, dv (may be empty): the host form's steps as device GEMMs and row kernels.
void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v, const DeviceTensor& dout, DeviceTensor& dq,
               DeviceTensor& dk, DeviceTensor& dv);

// Activations, element-wise: dx = f'(.) * dy. silu and gelu_tanh from the input x; tanh and sigmoid from
// the output y (their derivative is a function of it).
void silu(std::span<const float> x, std::span<const float> dy, std::span<float> dx, Exec e = {});
void gelu_tanh(std::span<const float> x, std::span<const float> dy, std::span<float> dx, Exec e = {});
void tanh(std::span<const float> y, std::span<const float> dy, std::span<float> dx, Exec e = {});
void sigmoid(std::span<const float> y, std::span<const float> dy, std::span<float> dx, Exec e = {});

// One row of y = softmax(x): dx = y * (dy - sum(dy * y)), from the output y.
void softmax(std::span<const float> y, std::span<const float> dy, std::span<float> dx, Exec e = {});

// One row of y = x / sqrt(mean(x^2) + eps) * w: dx, and dw accumulated (dw += dy * x / rms).
void rmsnorm(std::span<const float> x, std::span<const float> w, float eps, std::span<const float> dy, std::span<float> dx,
             std::span<float> dw, Exec e = {});
// One row of y = (x - mean) / sqrt(var + eps) * w + b: dx, and dw, db accumulated.
void layernorm(std::span<const float> x, std::span<const float> w, float eps, std::span<const float> dy, std::span<float> dx,
               std::span<float> dw, std::span<float> db, Exec e = {});

// Cross-entropy of one row of logits against class `target`: returns -log softmax(logits)[target] and
// writes dlogits = scale * (softmax(logits) - onehot(target)) (scale: 1 / rows for a mean over rows).
float cross_entropy(std::span<const float> logits, std::size_t target, std::span<float> dlogits, float scale = 1.0f, Exec e = {});

// RoPE of `heads` heads of head_dim values at position pos (pairs (2i, 2i+1), or (i, i + rope_dim/2)
// with neox; angle pos * base^(-2i/rope_dim)): the forward is a rotation, so dx is dy rotated back.
void rope(std::span<const float> dy, std::size_t heads, std::size_t head_dim, std::size_t rope_dim, std::size_t pos, float base,
          bool neox, std::span<float> dx);

// out[t] = table[ids[t]] (rows of dim): dtable[ids[t]] += dy[t].
void embedding(std::span<const std::int32_t> ids, std::span<const float> dy, std::size_t dim, std::span<float> dtable);

// One head of causal attention, naive: S = Q K^T / sqrt(d) (row t sees keys 0..t), P = softmax(S),
// O = P V; Q, K, V, dO [T][d] -> dQ, dK, dV [T][d].
void attention(std::size_t T, std::size_t d, const float* q, const float* k, const float* v, const float* dout, float* dq, float* dk,
               float* dv, Exec e = {});

// AdamW (decoupled weight decay): one step t (1-based) of w from its gradient g, with the moments m, v.
struct AdamW {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
};
void adamw_step(std::span<float> w, std::span<const float> g, std::span<float> m, std::span<float> v, std::size_t t, const AdamW& o);
// The same in place on device tensors of one shape (m and v start as zeros: upload them).
void adamw_step(DeviceTensor& w, const DeviceTensor& g, DeviceTensor& m, DeviceTensor& v, std::size_t t, const AdamW& o);

}  // namespace trueno::grad
