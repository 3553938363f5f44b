// trueno::grad on device tensors beyond matmul, the activations and softmax (those are in device_ops.cpp):
// the norms, cross-entropy, RoPE, embedding, attention and AdamW. Checks on the host, then OpCalls to the
// device's backend (layouts in src/core/device_backend.h); attention is a sequence of other ops' calls.
//
// Note [Deterministic parameter gradients]
// A parameter gradient sums over rows (dw of a norm over the batch, an embedding row over the tokens that
// use it). The kernels give each thread one column and loop over the rows in order instead of adding with
// float atomics, whose order varies from run to run: the result is the same bits every run, and the
// embedding's (one addition per token, in token order from the given table) the host's bits exactly.
#include <cmath>

#include "api/device_op_checks.h"
#include "core/strings.h"
#include "trueno/error.h"
#include "trueno/grad.h"

namespace trueno::grad {
namespace {

using detail::common_device;
using detail::DeviceTensorAccess;
using detail::need_shape;
using detail::need_type;
using detail::OpCall;
using detail::prepare_out;
using detail::run;

void need_distinct(DeviceOp op, std::initializer_list<const DeviceTensor*> outputs, std::initializer_list<const DeviceTensor*> inputs) {
  for (const DeviceTensor* o : outputs) {
    if (o->empty()) continue;
    for (const DeviceTensor* i : inputs)
      if (DeviceTensorAccess::storage(*o) == DeviceTensorAccess::storage(*i))
        throw InvalidArgument(strcat("grad::", name(op), ": an output is also an input; pass another tensor"));
  }
}

// A parameter gradient: accumulated into when given (beta 1), else allocated and overwritten (beta 0).
float prepare_param_grad(DeviceOp op, const Device& d, DeviceTensor& g, const Shape& shape) {
  const bool given = !g.empty();
  prepare_out(op, d, g, shape, QuantType::F32);
  return given ? 1.0f : 0.0f;
}

void norm(DeviceOp op, const DeviceTensor& x, const DeviceTensor& w, float eps, const DeviceTensor& dy, DeviceTensor& dx, DeviceTensor& dw,
          DeviceTensor* db) {
  const Device d = common_device(op, {{"x", &x}, {"w", &w}, {"dy", &dy}});
  need_type(op, "x", x, QuantType::F32), need_type(op, "w", w, QuantType::F32), need_type(op, "dy", dy, QuantType::F32);
  const std::size_t n = x.cols();
  if (n == 0) throw InvalidArgument(strcat("grad::", name(op), ": undefined for rows of no element"));
  need_shape(op, "w", w, n);
  if (dy.shape() != x.shape()) throw ShapeError(strcat("grad::", name(op), ": x has ", x.size(), " elements, dy ", dy.size(), "; shapes must match"));
  need_distinct(op, {&dx, &dw}, {&x, &w, &dy});
  if (db) need_distinct(op, {db}, {&x, &w, &dy, &dx, &dw});
  if (!dx.empty() && !dw.empty() && DeviceTensorAccess::storage(dx) == DeviceTensorAccess::storage(dw))
    throw InvalidArgument(strcat("grad::", name(op), ": dx and dw are one tensor"));
  prepare_out(op, d, dx, x.shape(), QuantType::F32);
  OpCall call{op, d};
  call.beta = prepare_param_grad(op, d, dw, {n});
  if (db && prepare_param_grad(op, d, *db, {n}) != call.beta)
    throw InvalidArgument("grad::layernorm: dw and db must both be given (accumulated) or both empty");
  call.m = x.rows(), call.n = n, call.eps = eps;
  run(call, {&x, &w, &dy}, dx, &dw, db);
}

}  // namespace

void rmsnorm(const DeviceTensor& x, const DeviceTensor& w, float eps, const DeviceTensor& dy, DeviceTensor& dx, DeviceTensor& dw) {
  norm(DeviceOp::RmsnormBackward, x, w, eps, dy, dx, dw, nullptr);
}

void layernorm(const DeviceTensor& x, const DeviceTensor& w, float eps, const DeviceTensor& dy, DeviceTensor& dx, DeviceTensor& dw,
               DeviceTensor& db) {
  norm(DeviceOp::LayernormBackward, x, w, eps, dy, dx, dw, &db);
}

void cross_entropy(const DeviceTensor& logits, const DeviceTensor& targets, DeviceTensor& loss, DeviceTensor& dlogits, float scale) {
  constexpr DeviceOp op = DeviceOp::CrossEntropy;
  const Device d = common_device(op, {{"logits", &logits}, {"targets", &targets}});
  need_type(op, "logits", logits, QuantType::F32), need_type(op, "targets", targets, QuantType::I32);
  if (logits.cols() == 0) throw InvalidArgument("grad::cross_entropy: undefined for rows of no class");
  need_shape(op, "targets", targets, logits.rows());
  need_distinct(op, {&loss, &dlogits}, {&logits, &targets});
  prepare_out(op, d, dlogits, logits.shape(), QuantType::F32);
  prepare_out(op, d, loss, {logits.rows()}, QuantType::F32);
  if (DeviceTensorAccess::storage(loss) == DeviceTensorAccess::storage(dlogits))
    throw InvalidArgument("grad::cross_entropy: loss and dlogits are one tensor");
  OpCall call{op, d};
  call.m = logits.rows(), call.n = logits.cols(), call.alpha = scale;
  run(call, {&logits, &targets}, dlogits, &loss);
}

void rope(const DeviceTensor& dy, std::size_t heads, std::size_t rope_dim, std::size_t pos, float base, bool neox, DeviceTensor& dx) {
  constexpr DeviceOp op = DeviceOp::RopeBackward;
  const Device d = common_device(op, {{"dy", &dy}});
  need_type(op, "dy", dy, QuantType::F32);
  if (heads == 0 || dy.cols() % heads != 0)
    throw ShapeError(strcat("grad::rope: rows of ", dy.cols(), " values are not ", heads, " heads"));
  const std::size_t head_dim = dy.cols() / heads;
  if (rope_dim % 2 != 0 || rope_dim > head_dim) throw ShapeError(strcat("grad::rope: rope_dim ", rope_dim, ", head_dim ", head_dim));
  prepare_out(op, d, dx, dy.shape(), QuantType::F32);
  OpCall call{op, d};
  call.m = dy.rows(), call.n = heads, call.k = head_dim, call.pos = pos, call.rope_dim = rope_dim, call.base = base, call.neox = neox;
  run(call, {&dy}, dx);
}

void embedding(const DeviceTensor& ids, const DeviceTensor& dy, DeviceTensor& dtable, std::size_t rows) {
  constexpr DeviceOp op = DeviceOp::EmbeddingBackward;
  const Device d = common_device(op, {{"ids", &ids}, {"dy", &dy}});
  need_type(op, "ids", ids, QuantType::I32), need_type(op, "dy", dy, QuantType::F32);
  const std::size_t dim = dy.cols();
  if (dy.rows() != ids.size()) throw ShapeError(strcat("grad::embedding: ", ids.size(), " ids but dy has ", dy.rows(), " rows"));
  if (!dtable.empty()) {
    if (dtable.cols() != dim) throw ShapeError(strcat("grad::embedding: dtable rows have ", dtable.cols(), " values, dy rows ", dim));
    rows = dtable.rows();
  } else if (rows == 0) {
    throw InvalidArgument("grad::embedding: an empty dtable needs the table's row count (rows)");
  }
  need_distinct(op, {&dtable}, {&ids, &dy});
  OpCall call{op, d};
  call.beta = prepare_param_grad(op, d, dtable, {rows, dim});
  call.m = ids.size(), call.n = dim, call.k = rows;
  run(call, {&ids, &dy}, dtable);
}

void bias(const DeviceTensor& dy, DeviceTensor& db, bool accumulate) {
  constexpr DeviceOp op = DeviceOp::BiasBackward;
  const Device d = common_device(op, {{"dy", &dy}});
  need_type(op, "dy", dy, QuantType::F32);
  need_distinct(op, {&db}, {&dy});
  if (accumulate && db.empty()) throw InvalidArgument("grad::bias: accumulate needs the gradient tensor to add into (db is empty)");
  prepare_out(op, d, db, {dy.cols()}, QuantType::F32);
  OpCall call{op, d};
  call.beta = accumulate ? 1.0f : 0.0f;
  call.m = dy.rows(), call.n = dy.cols();
  run(call, {&dy}, db);
}

// The host form's steps (src/grad/grad.cpp) as device calls: S = Q K^T, P = causal softmax(S / sqrt(d)),
// dV = P^T dO, dP = dO V^T, dS = softmax'(P, dP) / sqrt(d), dQ = dS K, dK = dS^T Q.
void attention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v, const DeviceTensor& dout, DeviceTensor& dq,
               DeviceTensor& dk, DeviceTensor& dv) {
  constexpr DeviceOp op = DeviceOp::AttentionBackward;
  const Device d = common_device(op, {{"q", &q}, {"k", &k}, {"v", &v}, {"dout", &dout}});
  for (const auto& [what, t] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}, {"dout", &dout}}) {
    need_type(op, what, *t, QuantType::F32);
    detail::need_matrix(op, what, *t);
    if (t->shape() != q.shape()) throw ShapeError(strcat("grad::attention: ", what, " is not [T][d] as q (", q.rows(), " x ", q.cols(), ")"));
  }
  need_distinct(op, {&dq, &dk, &dv}, {&q, &k, &v, &dout});
  const std::size_t T = q.rows(), dim = q.cols();
  if (T == 0 || dim == 0) throw ShapeError("grad::attention: empty shape");
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  DeviceTensor s, p, dp;
  prepare_out(op, d, p, {T, T}, QuantType::F32);  // names attention_backward when the device lacks its kernel
  for (DeviceTensor* g : {&dq, &dk, &dv}) prepare_out(op, d, *g, {T, dim}, QuantType::F32);
  const auto gemm = [&](std::size_t m, std::size_t n, std::size_t kk, bool ta, bool tb, const DeviceTensor& a, const DeviceTensor& b,
                        DeviceTensor& out) {
    if (out.empty()) out = DeviceTensor::empty(d, {m, n});
    OpCall call{DeviceOp::MatmulBackward, d};
    call.m = m, call.n = n, call.k = kk, call.trans_a = ta, call.trans_b = tb;
    run(call, {&a, &b}, out);
  };
  gemm(T, T, dim, false, true, q, k, s);  // S = Q K^T
  OpCall softmax_call{op, d};
  softmax_call.m = T, softmax_call.n = T, softmax_call.alpha = scale;
  run(softmax_call, {&s}, p);
  gemm(T, dim, T, true, false, p, dout, dv);  // dV = P^T dO
  gemm(T, T, dim, false, true, dout, v, dp);  // dP = dO V^T
  OpCall back{DeviceOp::SoftmaxBackward, d};  // dS into s, scaled in place
  back.m = T, back.n = T;
  run(back, {&p, &dp}, s);
  OpCall scale_call{DeviceOp::Scale, d};
  scale_call.n = T * T, scale_call.alpha = scale;
  run(scale_call, {&s}, s);
  gemm(T, dim, T, false, false, s, k, dq);  // dQ = dS K
  gemm(T, dim, T, true, false, s, q, dk);   // dK = dS^T Q
}

void adamw_step(DeviceTensor& w, const DeviceTensor& g, DeviceTensor& m, DeviceTensor& v, std::size_t t, const AdamW& o) {
  constexpr DeviceOp op = DeviceOp::AdamwStep;
  const Device d = common_device(op, {{"w", &w}, {"g", &g}, {"m", &m}, {"v", &v}});
  for (const auto& [what, x] : {std::pair<const char*, const DeviceTensor*>{"w", &w}, {"g", &g}, {"m", &m}, {"v", &v}}) {
    need_type(op, what, *x, QuantType::F32);
    need_shape(op, what, *x, w.size());
  }
  if (t < 1) throw InvalidArgument("grad::adamw_step: steps count from 1");
  const auto& sw = DeviceTensorAccess::storage(w);
  const auto& sm = DeviceTensorAccess::storage(m);
  const auto& sv = DeviceTensorAccess::storage(v);
  const auto& sg = DeviceTensorAccess::storage(g);
  if (sw == sm || sw == sv || sm == sv || sg == sw || sg == sm || sg == sv)
    throw InvalidArgument("grad::adamw_step: w, g, m and v must be four tensors");
  detail::backend_with_kernel(op, d, QuantType::F32);
  OpCall call{op, d};
  call.n = w.size(), call.adamw = o;
  call.bias1 = 1.0f - std::pow(o.beta1, static_cast<float>(t)), call.bias2 = 1.0f - std::pow(o.beta2, static_cast<float>(t));
  run(call, {&g}, w, &m, &v);
}

}  // namespace trueno::grad
