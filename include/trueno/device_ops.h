// trueno's ops on device tensors (device_tensor.h): the same names and meanings as the host ops of ops.h,
// run where the operands live. Each call checks shapes and devices on the host, enqueues its kernels on
// the operands' device and returns; nothing is copied to or from the host. `out` may be empty (it is
// then allocated on the operands' device with the op's shape) or a tensor of that shape and type on the
// same device; element-wise ops may write in place (out is a or b). Errors: ShapeError (shapes),
// InvalidArgument (an empty input, operands on two devices, an output aliasing a matmul input),
// BackendUnavailable ("op X has no kernel on device Y").
// The op list is include/trueno/device_ops.inc; where each runs: docs/DEVICE_OPS.md.
#pragma once
#include <string>
#include <string_view>

#include "trueno/device_tensor.h"

namespace trueno {

enum class DeviceOp {
#define TRUENO_DEVICE_OP(Enum, name, form) Enum,
#include "trueno/device_ops.inc"
#undef TRUENO_DEVICE_OP
};

inline constexpr DeviceOp kAllDeviceOps[] = {
#define TRUENO_DEVICE_OP(Enum, name, form) DeviceOp::Enum,
#include "trueno/device_ops.inc"
#undef TRUENO_DEVICE_OP
};

// How an op is called (the list's third column).
enum class DeviceOpForm { Binary, Unary, Reduce, Rows, Matmul, Matvec, Convert, Backward };

std::string_view name(DeviceOp op);
DeviceOpForm form(DeviceOp op);
// The type of op's first input that its kernels take (f16 for f16_to_f32, bf16 for bf16_to_f32, else f32;
// matvec: f32 here, its weights may be any type has_kernel accepts).
QuantType kernel_input(DeviceOp op);
// Whether d's backend has a kernel for op with its first input of `input` type (matvec: the weights').
// False for a device kind this build lacks. Says nothing of whether d is available (is_available).
bool has_kernel(const Device& d, DeviceOp op, QuantType input = QuantType::F32);

namespace ops {

// ---- element-wise: out[i] = f(a[i], b[i]) or f(x[i]) (f32, equal shapes) ----
void add(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out);
void sub(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out);
void mul(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out);
void div(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out);
void swiglu(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& out);  // silu(a) * b
void scale(const DeviceTensor& x, float alpha, DeviceTensor& out);
void abs(const DeviceTensor& x, DeviceTensor& out);
void relu(const DeviceTensor& x, DeviceTensor& out);
void exp(const DeviceTensor& x, DeviceTensor& out);
void sigmoid(const DeviceTensor& x, DeviceTensor& out);
void tanh(const DeviceTensor& x, DeviceTensor& out);
void gelu_tanh(const DeviceTensor& x, DeviceTensor& out);
void gelu_erf(const DeviceTensor& x, DeviceTensor& out);
void silu(const DeviceTensor& x, DeviceTensor& out);

// ---- reductions over every element: out is one f32 on the device (download it, or feed it on) ----
// max/min/mean/argmax/argmin of an empty x: InvalidArgument, as the host ops.
void sum(const DeviceTensor& x, DeviceTensor& out);
void max(const DeviceTensor& x, DeviceTensor& out);
void min(const DeviceTensor& x, DeviceTensor& out);
void mean(const DeviceTensor& x, DeviceTensor& out);
void dot(const DeviceTensor& x, const DeviceTensor& y, DeviceTensor& out);
// out is one i32 (download_ids): the first index of the largest (smallest) value; the first NaN wins.
void argmax(const DeviceTensor& x, DeviceTensor& out);
void argmin(const DeviceTensor& x, DeviceTensor& out);

// ---- row-wise over the last dimension (x [rows][n], weight and bias [n]) ----
void softmax(const DeviceTensor& x, DeviceTensor& out);
void rmsnorm(const DeviceTensor& x, const DeviceTensor& weight, float eps, DeviceTensor& out);
void layernorm(const DeviceTensor& x, const DeviceTensor& weight, const DeviceTensor& bias, float eps, DeviceTensor& out);
// out[r][c] = x[r][c] + bias[c] (a broadcast add; in place when out is x). Gradient: grad::bias.
void add_bias(const DeviceTensor& x, const DeviceTensor& bias, DeviceTensor& out);

// ---- matrices ----
// C[m][n] = A[m][k] B[k][n] (f32, row-major).
void matmul(const DeviceTensor& a, const DeviceTensor& b, DeviceTensor& c);
// y[m] = W[m][k] x[k]: W f32, f16 or quantized (upload_quantized), x and y f32.
void matvec(const DeviceTensor& w, const DeviceTensor& x, DeviceTensor& y);

// ---- conversions (round to nearest even) ----
void f32_to_f16(const DeviceTensor& x, DeviceTensor& out);
void f16_to_f32(const DeviceTensor& x, DeviceTensor& out);
void f32_to_bf16(const DeviceTensor& x, DeviceTensor& out);  // NaN stays NaN (quiet), as the CPU's
void bf16_to_f32(const DeviceTensor& x, DeviceTensor& out);

}  // namespace ops
}  // namespace trueno
