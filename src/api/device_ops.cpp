// trueno::ops on device tensors (device_ops.h): every check on the host (empty inputs, one device,
// shapes, types, a kernel on the device), then one OpCall to the device's backend.
#include "trueno/device_ops.h"

#include <initializer_list>
#include <utility>

#include "api/device_op_checks.h"
#include "core/device_backend.h"
#include "core/strings.h"
#include "trueno/error.h"
#include "trueno/grad.h"

namespace trueno {
namespace detail {

// The device every operand is on: InvalidArgument for an empty (host-side) input or for two devices.
Device common_device(DeviceOp op, std::initializer_list<std::pair<const char*, const DeviceTensor*>> inputs) {
  const Device* d = nullptr;
  const char* first = nullptr;
  for (const auto& [what, t] : inputs) {
    if (t->empty())
      throw InvalidArgument(strcat("ops::", name(op), ": ", what,
                                   " is an empty DeviceTensor (host data must be uploaded first: DeviceTensor::upload)"));
    if (d == nullptr) {
      d = &t->device(), first = what;
    } else if (!(t->device() == *d)) {
      throw InvalidArgument(strcat("ops::", name(op), ": ", first, " is on ", d->str(), " but ", what, " is on ", t->device().str(),
                                   "; copy one explicitly (DeviceTensor::to)"));
    }
  }
  return *d;
}

detail::DeviceBackend& backend_with_kernel(DeviceOp op, const Device& d, QuantType type) {
  detail::DeviceBackend* b = detail::find_device_backend(d.kind);
  const std::string why = b == nullptr ? strcat("this build has no ", name(d.kind), " backend") : b->missing(op, type);
  if (!why.empty())
    throw BackendUnavailable(strcat("op ", name(op), " has no kernel on device ", d.str(), " for ", quant_info(type).name, " input: ", why));
  return *b;
}

void need_type(DeviceOp op, const char* what, const DeviceTensor& t, QuantType type) {
  if (t.type() != type)
    throw InvalidArgument(strcat("ops::", name(op), ": ", what, " holds ", quant_info(t.type()).name, ", needs ", quant_info(type).name));
}

void need_shape(DeviceOp op, const char* what, const DeviceTensor& t, std::size_t elems) {
  if (t.size() != elems) throw ShapeError(strcat("ops::", name(op), ": ", what, " has ", t.size(), " elements, needs ", elems));
}

// A given out must be on d with the op's shape and type (checked before the kernel, so that a user's
// mistake is named before what the build lacks); then d must have a kernel for op on `input`; an empty
// out is then allocated on d.
void prepare_out(DeviceOp op, const Device& d, DeviceTensor& out, const Shape& shape, QuantType type, QuantType input) {
  if (out.empty()) {
    backend_with_kernel(op, d, input);
    out = DeviceTensor::empty(d, shape, type);
    return;
  }
  if (!(out.device() == d))
    throw InvalidArgument(strcat("ops::", name(op), ": out is on ", out.device().str(), " but the inputs are on ", d.str(),
                                 "; pass an empty tensor or one on ", d.str()));
  need_type(op, "out", out, type);
  std::size_t elems = 1;
  for (std::size_t s : shape) elems *= s;
  need_shape(op, "out", out, elems);
  backend_with_kernel(op, d, input);
}

void run(OpCall& call, std::initializer_list<const DeviceTensor*> inputs, DeviceTensor& out, DeviceTensor* out2, DeviceTensor* out3) {
  detail::DeviceBackend& b = backend_with_kernel(call.op, call.device, call.type);
  std::shared_ptr<detail::DeviceStorage> keep[6];
  std::size_t n = 0, i = 0;
  for (const DeviceTensor* t : inputs) {
    keep[n++] = DeviceTensorAccess::storage(*t);
    call.in[i++] = DeviceTensorAccess::storage(*t).get();
  }
  keep[n++] = DeviceTensorAccess::storage(out);
  call.out = DeviceTensorAccess::storage(out).get();
  if (out2) keep[n++] = DeviceTensorAccess::storage(*out2), call.out2 = DeviceTensorAccess::storage(*out2).get();
  if (out3) keep[n++] = DeviceTensorAccess::storage(*out3), call.out3 = DeviceTensorAccess::storage(*out3).get();
  b.enqueue(call, keep, n);
}

void need_matrix(DeviceOp op, const char* what, const DeviceTensor& t) {
  if (t.shape().size() != 2) throw ShapeError(strcat("ops::", name(op), ": ", what, " must be a matrix (2 dimensions), has ", t.shape().size()));
}

}  // namespace detail

namespace {

using detail::DeviceTensorAccess;
using detail::OpCall;
using namespace detail;

constexpr std::string_view kNames[] = {
#define TRUENO_DEVICE_OP(Enum, name, form) name,
#include "trueno/device_ops.inc"
#undef TRUENO_DEVICE_OP
};

constexpr DeviceOpForm kForms[] = {
#define TRUENO_DEVICE_OP(Enum, name, form) DeviceOpForm::form,
#include "trueno/device_ops.inc"
#undef TRUENO_DEVICE_OP
};

void binary(DeviceOp op, const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) {
  const Device d = common_device(op, {{"a", &a}, {"b", &b}});
  need_type(op, "a", a, QuantType::F32), need_type(op, "b", b, QuantType::F32);
  if (a.shape() != b.shape()) throw ShapeError(strcat("ops::", name(op), ": a has ", a.size(), " elements, b ", b.size(), "; shapes must match"));
  prepare_out(op, d, out, a.shape(), QuantType::F32);
  OpCall call{op, d};
  call.n = a.size();
  run(call, {&a, &b}, out);
}

void unary(DeviceOp op, const DeviceTensor& x, DeviceTensor& out, float alpha = 0.0f) {
  const Device d = common_device(op, {{"x", &x}});
  need_type(op, "x", x, QuantType::F32);
  prepare_out(op, d, out, x.shape(), QuantType::F32);
  OpCall call{op, d};
  call.n = x.size(), call.alpha = alpha;
  run(call, {&x}, out);
}

void reduce(DeviceOp op, const DeviceTensor& x, const DeviceTensor* y, DeviceTensor& out) {
  const Device d = y ? common_device(op, {{"x", &x}, {"y", y}}) : common_device(op, {{"x", &x}});
  need_type(op, "x", x, QuantType::F32);
  if (y) {
    need_type(op, "y", *y, QuantType::F32);
    need_shape(op, "y", *y, x.size());
  }
  if (op != DeviceOp::Sum && op != DeviceOp::Dot && x.size() == 0)
    throw InvalidArgument(strcat("ops::", name(op), ": undefined for an empty input; pass at least one element"));
  const bool index = op == DeviceOp::Argmax || op == DeviceOp::Argmin;
  if (index && x.size() > 0x7fffffffu) throw ShapeError(strcat("ops::", name(op), ": ", x.size(), " elements; the i32 index needs fewer than 2^31"));
  prepare_out(op, d, out, {1}, index ? QuantType::I32 : QuantType::F32);
  OpCall call{op, d};
  call.n = x.size();
  if (y) run(call, {&x, y}, out); else run(call, {&x}, out);
}

// x [rows][n] with per-column weight (and bias).
void rows(DeviceOp op, const DeviceTensor& x, const DeviceTensor* w, const DeviceTensor* b, float eps, DeviceTensor& out) {
  const Device d = b ? common_device(op, {{"x", &x}, {"weight", w}, {"bias", b}})
                     : w ? common_device(op, {{"x", &x}, {"weight", w}}) : common_device(op, {{"x", &x}});
  need_type(op, "x", x, QuantType::F32);
  const std::size_t n = x.cols();
  if (n == 0) throw InvalidArgument(strcat("ops::", name(op), ": undefined for rows of no element"));
  if (w) need_type(op, "weight", *w, QuantType::F32), need_shape(op, "weight", *w, n);
  if (b) need_type(op, "bias", *b, QuantType::F32), need_shape(op, "bias", *b, n);
  prepare_out(op, d, out, x.shape(), QuantType::F32);
  OpCall call{op, d};
  call.m = x.rows(), call.n = n, call.eps = eps;
  if (b) run(call, {&x, w, b}, out); else if (w) run(call, {&x, w}, out); else run(call, {&x}, out);
}

void convert(DeviceOp op, const DeviceTensor& x, QuantType from, QuantType to, DeviceTensor& out) {
  const Device d = common_device(op, {{"x", &x}});
  need_type(op, "x", x, from);
  prepare_out(op, d, out, x.shape(), to, from);
  OpCall call{op, d};
  call.n = x.size(), call.type = from;
  run(call, {&x}, out);
}

}  // namespace

std::string_view name(DeviceOp op) { return kNames[static_cast<int>(op)]; }
QuantType kernel_input(DeviceOp op) {
  return op == DeviceOp::F16ToF32 ? QuantType::F16 : op == DeviceOp::Bf16ToF32 ? QuantType::BF16 : QuantType::F32;
}
DeviceOpForm form(DeviceOp op) { return kForms[static_cast<int>(op)]; }

bool has_kernel(const Device& d, DeviceOp op, QuantType input) {
  const detail::DeviceBackend* b = detail::find_device_backend(d.kind);
  return b != nullptr && b->missing(op, input).empty();
}

namespace ops {

void add(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) { binary(DeviceOp::Add, a, b, out); }
void sub(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) { binary(DeviceOp::Sub, a, b, out); }
void mul(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) { binary(DeviceOp::Mul, a, b, out); }
void div(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) { binary(DeviceOp::Div, a, b, out); }
void swiglu(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out) { binary(DeviceOp::Swiglu, a, b, out); }
void scale(const DeviceTensor& x, float alpha, DeviceTensor& out) { unary(DeviceOp::Scale, x, out, alpha); }
void abs(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::Abs, x, out); }
void relu(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::Relu, x, out); }
void exp(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::Exp, x, out); }
void sigmoid(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::Sigmoid, x, out); }
void tanh(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::Tanh, x, out); }
void gelu_tanh(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::GeluTanh, x, out); }
void gelu_erf(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::GeluErf, x, out); }
void silu(const DeviceTensor& x, DeviceTensor& out) { unary(DeviceOp::Silu, x, out); }

void sum(const DeviceTensor& x, DeviceTensor& out) { reduce(DeviceOp::Sum, x, nullptr, out); }
void max(const DeviceTensor& x, DeviceTensor& out) { reduce(DeviceOp::Max, x, nullptr, out); }
void min(const DeviceTensor& x, DeviceTensor& out) { reduce(DeviceOp::Min, x, nullptr, out); }
void mean(const DeviceTensor& x, DeviceTensor& out) { reduce(DeviceOp::Mean, x, nullptr, out); }
void dot(const DeviceTensor& x, const DeviceTensor& y, DeviceTensor& out) { reduce(DeviceOp::Dot, x, &y, out); }
void argmax(const DeviceTensor& x, DeviceTensor& out) { reduce(DeviceOp::Argmax, x, nullptr, out); }
void argmin(const DeviceTensor& x, DeviceTensor& out) { reduce(DeviceOp::Argmin, x, nullptr, out); }

void softmax(const DeviceTensor& x, DeviceTensor& out) { rows(DeviceOp::Softmax, x, nullptr, nullptr, 0.0f, out); }
void rmsnorm(const DeviceTensor& x, const DeviceTensor& weight, float eps, DeviceTensor& out) {
  rows(DeviceOp::Rmsnorm, x, &weight, nullptr, eps, out);
}
void layernorm(const DeviceTensor& x, const DeviceTensor& weight, const DeviceTensor& bias, float eps, DeviceTensor& out) {
  rows(DeviceOp::Layernorm, x, &weight, &bias, eps, out);
}

void add_bias(const DeviceTensor& x, const DeviceTensor& bias, DeviceTensor& out) {
  constexpr DeviceOp op = DeviceOp::AddBias;
  const Device d = common_device(op, {{"x", &x}, {"bias", &bias}});
  need_type(op, "x", x, QuantType::F32), need_type(op, "bias", bias, QuantType::F32);
  need_shape(op, "bias", bias, x.cols());
  prepare_out(op, d, out, x.shape(), QuantType::F32);
  OpCall call{op, d};
  call.m = x.rows(), call.n = x.cols();
  run(call, {&x, &bias}, out);
}

void matmul(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& c) {
  constexpr DeviceOp op = DeviceOp::Matmul;
  const Device d = common_device(op, {{"a", &a}, {"b", &b}});
  need_type(op, "a", a, QuantType::F32), need_type(op, "b", b, QuantType::F32);
  need_matrix(op, "a", a), need_matrix(op, "b", b);
  if (a.cols() != b.rows())
    throw ShapeError(strcat("ops::matmul: a is ", a.rows(), " x ", a.cols(), ", b is ", b.rows(), " x ", b.cols(), "; a's columns must equal b's rows"));
  if (!c.empty() && (DeviceTensorAccess::storage(c) == DeviceTensorAccess::storage(a) || DeviceTensorAccess::storage(c) == DeviceTensorAccess::storage(b)))
    throw InvalidArgument("ops::matmul: c is also an input; pass another tensor");
  prepare_out(op, d, c, {a.rows(), b.cols()}, QuantType::F32);
  OpCall call{op, d};
  call.m = a.rows(), call.n = b.cols(), call.k = a.cols();
  run(call, {&a, &b}, c);
}

void matvec(const DeviceTensor& w, const DeviceTensor& x, DeviceTensor& y) {
  constexpr DeviceOp op = DeviceOp::Matvec;
  const Device d = common_device(op, {{"w", &w}, {"x", &x}});
  need_matrix(op, "w", w);
  need_type(op, "x", x, QuantType::F32);
  need_shape(op, "x", x, w.cols());
  if (!y.empty() && DeviceTensorAccess::storage(y) == DeviceTensorAccess::storage(x))
    throw InvalidArgument("ops::matvec: y is also the input x; pass another tensor");
  prepare_out(op, d, y, {w.rows()}, QuantType::F32, w.type());
  OpCall call{op, d};
  call.m = w.rows(), call.k = w.cols(), call.type = w.type();
  run(call, {&w, &x}, y);
}

void f32_to_f16(const DeviceTensor& x, DeviceTensor& out) { convert(DeviceOp::F32ToF16, x, QuantType::F32, QuantType::F16, out); }
void f16_to_f32(const DeviceTensor& x, DeviceTensor& out) { convert(DeviceOp::F16ToF32, x, QuantType::F16, QuantType::F32, out); }
void f32_to_bf16(const DeviceTensor& x, DeviceTensor& out) { convert(DeviceOp::F32ToBf16, x, QuantType::F32, QuantType::BF16, out); }
void bf16_to_f32(const DeviceTensor& x, DeviceTensor& out) { convert(DeviceOp::Bf16ToF32, x, QuantType::BF16, QuantType::F32, out); }

}  // namespace ops

namespace grad {

// dA[m][k] = dC[m][n] B^T and dB[k][n] = A^T dC: the Matmul kernels with a transposed operand and beta.
void matmul(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& dc, DeviceTensor* da, DeviceTensor* db, bool accumulate) {
  constexpr DeviceOp op = DeviceOp::MatmulBackward;
  const Device d = common_device(op, {{"a", &a}, {"b", &b}, {"dc", &dc}});
  need_type(op, "a", a, QuantType::F32), need_type(op, "b", b, QuantType::F32), need_type(op, "dc", dc, QuantType::F32);
  need_matrix(op, "a", a), need_matrix(op, "b", b), need_matrix(op, "dc", dc);
  const std::size_t m = a.rows(), k = a.cols(), n = b.cols();
  if (b.rows() != k || dc.rows() != m || dc.cols() != n)
    throw ShapeError(strcat("grad::matmul: a is ", m, " x ", k, ", b ", b.rows(), " x ", n, ", dc ", dc.rows(), " x ", dc.cols(),
                            "; need a [m][k], b [k][n], dc [m][n]"));
  for (DeviceTensor* g : {da, db}) {
    if (g == nullptr) continue;
    const auto& s = DeviceTensorAccess::storage(*g);
    if (!g->empty() && (s == DeviceTensorAccess::storage(a) || s == DeviceTensorAccess::storage(b) || s == DeviceTensorAccess::storage(dc)))
      throw InvalidArgument("grad::matmul: a gradient output is also an input; pass another tensor");
    if (accumulate && g->empty()) throw InvalidArgument("grad::matmul: accumulate needs the gradient tensors to add into (they are empty)");
  }
  if (da) {
    prepare_out(op, d, *da, {m, k}, QuantType::F32);
    OpCall call{op, d};
    call.m = m, call.n = k, call.k = n, call.trans_b = true, call.beta = accumulate ? 1.0f : 0.0f;
    run(call, {&dc, &b}, *da);
  }
  if (db) {
    prepare_out(op, d, *db, {k, n}, QuantType::F32);
    OpCall call{op, d};
    call.m = k, call.n = n, call.k = m, call.trans_a = true, call.beta = accumulate ? 1.0f : 0.0f;
    run(call, {&a, &dc}, *db);
  }
}

void silu(const DeviceTensor& x, const DeviceTensor& dy, DeviceTensor& dx) { binary(DeviceOp::SiluBackward, x, dy, dx); }
void gelu_tanh(const DeviceTensor& x, const DeviceTensor& dy, DeviceTensor& dx) { binary(DeviceOp::GeluTanhBackward, x, dy, dx); }
void tanh(const DeviceTensor& y, const DeviceTensor& dy, DeviceTensor& dx) { binary(DeviceOp::TanhBackward, y, dy, dx); }
void sigmoid(const DeviceTensor& y, const DeviceTensor& dy, DeviceTensor& dx) { binary(DeviceOp::SigmoidBackward, y, dy, dx); }

void softmax(const DeviceTensor& y, const DeviceTensor& dy, DeviceTensor& dx) {
  constexpr DeviceOp op = DeviceOp::SoftmaxBackward;
  const Device d = common_device(op, {{"y", &y}, {"dy", &dy}});
  need_type(op, "y", y, QuantType::F32), need_type(op, "dy", dy, QuantType::F32);
  if (y.shape() != dy.shape()) throw ShapeError(strcat("grad::softmax: y has ", y.size(), " elements, dy ", dy.size(), "; shapes must match"));
  if (y.cols() == 0) throw InvalidArgument("grad::softmax: undefined for rows of no element");
  prepare_out(op, d, dx, y.shape(), QuantType::F32);
  OpCall call{op, d};
  call.m = y.rows(), call.n = y.cols();
  run(call, {&y, &dy}, dx);
}

}  // namespace grad
}  // namespace trueno
