// The public device ops (trueno/device_ops.h) against the CPU ops, shared by every device backend's tests
// (src/vulkan/tensor_ops_test.cpp, src/cuda/tensor_ops_test.cpp): each op of the list
// (include/trueno/device_ops.inc) of one form, on fresh random inputs of a few sizes, checked by its
// contract `tensor_<op>` (matvec: `tensor_matvec_<weight type>`) in contracts/gpu/<backend>.yaml.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "trueno/device_ops.h"
#include "trueno/grad.h"
#include "trueno/matrix.h"
#include "trueno/offload.h"
#include "trueno/ops.h"
#include "trueno/quant.h"

namespace trueno::test {

inline std::string tensor_contract(DeviceOp op) { return "tensor_" + std::string(name(op)); }

// Every weight type the device matvec tests cover.
constexpr QuantType kMatvecTypes[] = {QuantType::F32, QuantType::F16, QuantType::Q4_0, QuantType::Q8_0,
                                      QuantType::Q4_K, QuantType::Q5_K, QuantType::Q6_K};

inline std::vector<float> as_floats(const std::vector<std::uint16_t>& bits) { return {bits.begin(), bits.end()}; }

inline void cpu_elementwise(DeviceOp op, const std::vector<float>& a, const std::vector<float>& b, float alpha, std::vector<float>& out) {
  switch (op) {
    case DeviceOp::Add: ops::add(a, b, out); break;
    case DeviceOp::Sub: ops::sub(a, b, out); break;
    case DeviceOp::Mul: ops::mul(a, b, out); break;
    case DeviceOp::Div: ops::div(a, b, out); break;
    case DeviceOp::Swiglu: ops::swiglu(a, b, out); break;
    case DeviceOp::Scale: ops::scale(a, alpha, out); break;
    case DeviceOp::Abs: ops::abs(a, out); break;
    case DeviceOp::Relu: ops::relu(a, out); break;
    case DeviceOp::Exp: ops::exp(a, out); break;
    case DeviceOp::Sigmoid: ops::sigmoid(a, out); break;
    case DeviceOp::Tanh: ops::tanh(a, out); break;
    case DeviceOp::GeluTanh: ops::gelu_tanh(a, out); break;
    case DeviceOp::GeluErf: ops::gelu_erf(a, out); break;
    case DeviceOp::Silu: ops::silu(a, out); break;
    default: FAIL() << name(op) << " is not element-wise";
  }
}

inline void device_elementwise(DeviceOp op, const DeviceTensor& a, const DeviceTensor& b, float alpha, DeviceTensor& out) {
  switch (op) {
    case DeviceOp::Add: ops::add(a, b, out); break;
    case DeviceOp::Sub: ops::sub(a, b, out); break;
    case DeviceOp::Mul: ops::mul(a, b, out); break;
    case DeviceOp::Div: ops::div(a, b, out); break;
    case DeviceOp::Swiglu: ops::swiglu(a, b, out); break;
    case DeviceOp::Scale: ops::scale(a, alpha, out); break;
    case DeviceOp::Abs: ops::abs(a, out); break;
    case DeviceOp::Relu: ops::relu(a, out); break;
    case DeviceOp::Exp: ops::exp(a, out); break;
    case DeviceOp::Sigmoid: ops::sigmoid(a, out); break;
    case DeviceOp::Tanh: ops::tanh(a, out); break;
    case DeviceOp::GeluTanh: ops::gelu_tanh(a, out); break;
    case DeviceOp::GeluErf: ops::gelu_erf(a, out); break;
    case DeviceOp::Silu: ops::silu(a, out); break;
    default: FAIL() << name(op) << " is not element-wise";
  }
}

// Binary and Unary ops: lengths 1, 1000 and 65537 (several workgroups, a partial last one); div's
// divisors kept away from 0; in place (out is a) at the largest size.
inline void check_elementwise(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (DeviceOp op : kAllDeviceOps) {
    if (form(op) != DeviceOpForm::Binary && form(op) != DeviceOpForm::Unary) continue;
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{65537}}) {
      std::vector<float> a = random_normal(n, rng, 3.0f), b = random_normal(n, rng, 1.0f);
      if (op == DeviceOp::Div)
        for (float& v : b) v = std::copysign(1.0f + std::fabs(v), v);
      const float alpha = 0.37f;
      std::vector<float> cpu(n);
      cpu_elementwise(op, a, b, alpha, cpu);
      const DeviceTensor da = DeviceTensor::upload(d, a), db = DeviceTensor::upload(d, b);
      DeviceTensor out;
      device_elementwise(op, da, db, alpha, out);
      expect_gpu_contract(backend, tensor_contract(op), out.download(), cpu, "n=" + std::to_string(n));
      if (n == 65537) {  // in place
        DeviceTensor inplace = DeviceTensor::upload(d, a);
        device_elementwise(op, inplace, db, alpha, inplace);
        expect_gpu_contract(backend, tensor_contract(op), inplace.download(), cpu, "in place n=" + std::to_string(n));
      }
    }
  }
}

inline float cpu_reduce(DeviceOp op, const std::vector<float>& x, const std::vector<float>& y) {
  switch (op) {
    case DeviceOp::Sum: return ops::sum(x);
    case DeviceOp::Max: return ops::max(x);
    case DeviceOp::Min: return ops::min(x);
    case DeviceOp::Mean: return ops::mean(x);
    default: return ops::dot(x, y);
  }
}

inline void device_reduce(DeviceOp op, const DeviceTensor& x, const DeviceTensor& y, DeviceTensor& out) {
  switch (op) {
    case DeviceOp::Sum: ops::sum(x, out); break;
    case DeviceOp::Max: ops::max(x, out); break;
    case DeviceOp::Min: ops::min(x, out); break;
    case DeviceOp::Mean: ops::mean(x, out); break;
    case DeviceOp::Dot: ops::dot(x, y, out); break;
    case DeviceOp::Argmax: ops::argmax(x, out); break;
    default: ops::argmin(x, out); break;
  }
}

// argmax / argmin: the CPU's index exactly, on random values, on ties (the first index wins: values drawn
// from a few levels, the extreme repeated in several workgroups) and with a NaN (the first NaN wins).
inline void check_arg_reduce(DeviceOp op, const Device& d, const char* backend, std::size_t n, std::mt19937_64& rng) {
  const auto cpu_index = [op](const std::vector<float>& x) { return op == DeviceOp::Argmax ? ops::argmax(x) : ops::argmin(x); };
  std::vector<float> x = random_normal(n, rng, 1.0f), ties(n);
  for (std::size_t i = 0; i < n; ++i) ties[i] = std::round(x[i]);  // about 7 levels, each repeated
  std::vector<float> nan = x;
  nan[n / 2] = NAN, nan[n - 1] = NAN;
  for (const auto& [what, v] : {std::pair<const char*, const std::vector<float>*>{"random", &x}, {"ties", &ties}, {"NaN", &nan}}) {
    DeviceTensor out;
    device_reduce(op, DeviceTensor::upload(d, *v), DeviceTensor(), out);
    std::int32_t got = -1;
    out.download_ids(std::span(&got, 1));
    expect_gpu_contract(backend, tensor_contract(op), {static_cast<float>(got)}, {static_cast<float>(cpu_index(*v))},
                        std::string(what) + " n=" + std::to_string(n));
  }
}

// Every Reduce op of the list on lengths 1, 5000 (a partial last workgroup) and 2^20.
inline void check_reductions(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (DeviceOp op : kAllDeviceOps) {
    if (form(op) != DeviceOpForm::Reduce) continue;
    for (std::size_t n : {std::size_t{1}, std::size_t{5000}, std::size_t{1} << 20}) {
      if (op == DeviceOp::Argmax || op == DeviceOp::Argmin) {
        check_arg_reduce(op, d, backend, n, rng);
        continue;
      }
      // Mean 1, not 0: a sum or dot of zero-mean values can cancel to near 0 for some seeds, and a bound
      // relative to the result then measures the data's conditioning, not the kernel (seed 1411194720 gave
      // tensor_dot n=5000 nmse 1.4e-7 against 1e-8 with both sides summing correctly in their own orders).
      std::vector<float> x = random_normal(n, rng, 1.0f), y = random_normal(n, rng, 1.0f);
      for (std::size_t i = 0; i < n; ++i) x[i] += 1.0f, y[i] += 1.0f;
      const DeviceTensor dx = DeviceTensor::upload(d, x), dy = DeviceTensor::upload(d, y);
      DeviceTensor out;
      device_reduce(op, dx, dy, out);
      expect_gpu_contract(backend, tensor_contract(op), out.download(), {cpu_reduce(op, x, y)}, "n=" + std::to_string(n));
    }
  }
}

inline void check_rows(const Device& d, const char* backend, std::mt19937_64& rng) {
  struct Case {
    std::size_t rows, n;
  };
  for (const Case c : {Case{1, 1}, Case{7, 300}, Case{33, 4096}}) {
    const std::vector<float> x = random_normal(c.rows * c.n, rng, 2.0f), w = random_normal(c.n, rng, 1.0f), b = random_normal(c.n, rng, 1.0f);
    const float eps = 1e-5f;
    const DeviceTensor dx = DeviceTensor::upload(d, x, {c.rows, c.n}), dw = DeviceTensor::upload(d, w), db = DeviceTensor::upload(d, b);
    const std::string what = std::to_string(c.rows) + " rows of " + std::to_string(c.n);
    for (DeviceOp op : {DeviceOp::Softmax, DeviceOp::Rmsnorm, DeviceOp::Layernorm, DeviceOp::AddBias}) {
      std::vector<float> cpu(x.size());
      for (std::size_t r = 0; r < c.rows; ++r) {
        const std::span<const float> xr(x.data() + r * c.n, c.n);
        const std::span<float> o(cpu.data() + r * c.n, c.n);
        if (op == DeviceOp::Softmax) ops::softmax(xr, o);
        else if (op == DeviceOp::Rmsnorm) ops::rmsnorm(xr, w, eps, o);
        else if (op == DeviceOp::AddBias) ops::add(xr, b, o);
        else ops::layernorm(xr, w, b, eps, o);
      }
      DeviceTensor out;
      if (op == DeviceOp::Softmax) ops::softmax(dx, out);
      else if (op == DeviceOp::Rmsnorm) ops::rmsnorm(dx, dw, eps, out);
      else if (op == DeviceOp::AddBias) ops::add_bias(dx, db, out);
      else ops::layernorm(dx, dw, db, eps, out);
      expect_gpu_contract(backend, tensor_contract(op), out.download(), cpu, what);
    }
    DeviceTensor inplace = DeviceTensor::upload(d, x, {c.rows, c.n});  // add_bias in place
    ops::add_bias(inplace, db, inplace);
    std::vector<float> cpu(x.size());
    for (std::size_t r = 0; r < c.rows; ++r) ops::add(std::span(x).subspan(r * c.n, c.n), b, std::span(cpu).subspan(r * c.n, c.n));
    expect_gpu_contract(backend, "tensor_add_bias", inplace.download(), cpu, what + " in place");
  }
}

inline void check_matmul(const Device& d, const char* backend, std::mt19937_64& rng) {
  struct Case {
    std::size_t m, n, k;
  };
  for (const Case c : {Case{1, 1, 1}, Case{67, 45, 130}, Case{128, 256, 64}, Case{3, 500, 777}}) {
    const std::vector<float> a = random_normal(c.m * c.k, rng), b = random_normal(c.k * c.n, rng);
    std::vector<float> cpu(c.m * c.n);
    ops::matmul(c.m, c.n, c.k, a.data(), c.k, b.data(), c.n, cpu.data(), c.n);
    DeviceTensor out;
    ops::matmul(DeviceTensor::upload(d, a, {c.m, c.k}), DeviceTensor::upload(d, b, {c.k, c.n}), out);
    ASSERT_EQ(out.shape(), (Shape{c.m, c.n}));
    expect_gpu_contract(backend, "tensor_matmul", out.download(), cpu,
                        std::to_string(c.m) + "x" + std::to_string(c.k) + " times " + std::to_string(c.k) + "x" + std::to_string(c.n));
  }
}

// grad::matmul on device tensors against the CPU's: both gradients, one of them alone, and accumulating
// into given tensors (the same contract for dA and dB, concatenated).
inline void check_matmul_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  struct Case {
    std::size_t m, n, k;
  };
  for (const Case c : {Case{1, 1, 1}, Case{67, 45, 130}, Case{33, 100, 7}}) {
    const std::vector<float> a = random_normal(c.m * c.k, rng), b = random_normal(c.k * c.n, rng), dc = random_normal(c.m * c.n, rng);
    const std::vector<float> da0 = random_normal(c.m * c.k, rng), db0 = random_normal(c.k * c.n, rng);
    const DeviceTensor ta = DeviceTensor::upload(d, a, {c.m, c.k}), tb = DeviceTensor::upload(d, b, {c.k, c.n}),
                       tdc = DeviceTensor::upload(d, dc, {c.m, c.n});
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.k) + " times " + std::to_string(c.k) + "x" + std::to_string(c.n);
    for (bool accumulate : {false, true}) {
      std::vector<float> da = da0, db = db0;
      grad::matmul(c.m, c.n, c.k, a.data(), b.data(), dc.data(), da.data(), db.data(), accumulate);
      DeviceTensor gda = accumulate ? DeviceTensor::upload(d, da0, {c.m, c.k}) : DeviceTensor();
      DeviceTensor gdb = accumulate ? DeviceTensor::upload(d, db0, {c.k, c.n}) : DeviceTensor();
      grad::matmul(ta, tb, tdc, &gda, &gdb, accumulate);
      std::vector<float> got = gda.download(), want = da;
      const std::vector<float> gotb = gdb.download();
      got.insert(got.end(), gotb.begin(), gotb.end());
      want.insert(want.end(), db.begin(), db.end());
      expect_gpu_contract(backend, "tensor_matmul_backward", got, want, what + (accumulate ? " accumulating" : ""));
    }
    DeviceTensor only_b;  // dA not wanted
    std::vector<float> db(c.k * c.n);
    grad::matmul(c.m, c.n, c.k, a.data(), b.data(), dc.data(), nullptr, db.data());
    grad::matmul(ta, tb, tdc, nullptr, &only_b);
    expect_gpu_contract(backend, "tensor_matmul_backward", only_b.download(), db, what + " dB alone");
  }
}

// silu' or gelu' (the tanh form) at x, trueno::grad's with dy = 1, for check_backward's choice of a single
// value; 1 for the others.
inline float activation_derivative(DeviceOp op, float x) {
  const float one = 1.0f;
  float d = 1.0f;
  if (op == DeviceOp::SiluBackward) grad::silu(std::span(&x, 1), std::span(&one, 1), std::span(&d, 1));
  if (op == DeviceOp::GeluTanhBackward) grad::gelu_tanh(std::span(&x, 1), std::span(&one, 1), std::span(&d, 1));
  return d;
}

// The activations' and softmax's backward on device tensors against trueno::grad's host forms (tanh and
// sigmoid take the forward's output, the others its input).
inline void check_backward(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (DeviceOp op : {DeviceOp::SiluBackward, DeviceOp::GeluTanhBackward, DeviceOp::TanhBackward, DeviceOp::SigmoidBackward}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{65537}}) {
      std::vector<float> x = random_normal(n, rng, 3.0f);
      // silu' = s (1 + x (1 - s)) crosses 0 near x = -1.2785 and gelu' near -0.7518, where their terms cancel:
      // there an ulp of the device's exp is any relative error, and one value's nmse is its relative error
      // squared (seed 2583911811 drew x there for silu: nmse 3e-9 on lavapipe against 1e-12). A single value is
      // drawn where the derivative is at least 1/4; the longer vectors' nmse is over all their values and keeps
      // the roots.
      while (n == 1 && std::fabs(activation_derivative(op, x[0])) < 0.25f) x = random_normal(n, rng, 3.0f);
      const std::vector<float> dy = random_normal(n, rng, 1.0f);
      if (op == DeviceOp::TanhBackward) ops::tanh(x, x);
      if (op == DeviceOp::SigmoidBackward) ops::sigmoid(x, x);
      std::vector<float> cpu(n);
      const DeviceTensor dx_in = DeviceTensor::upload(d, x), ddy = DeviceTensor::upload(d, dy);
      DeviceTensor out;
      switch (op) {
        case DeviceOp::SiluBackward: grad::silu(x, dy, cpu), grad::silu(dx_in, ddy, out); break;
        case DeviceOp::GeluTanhBackward: grad::gelu_tanh(x, dy, cpu), grad::gelu_tanh(dx_in, ddy, out); break;
        case DeviceOp::TanhBackward: grad::tanh(x, dy, cpu), grad::tanh(dx_in, ddy, out); break;
        default: grad::sigmoid(x, dy, cpu), grad::sigmoid(dx_in, ddy, out); break;
      }
      expect_gpu_contract(backend, tensor_contract(op), out.download(), cpu, "n=" + std::to_string(n));
    }
  }
  for (const auto& [rows, n] : {std::pair<std::size_t, std::size_t>{1, 1}, {7, 300}, {33, 4096}}) {
    std::vector<float> y = random_normal(rows * n, rng, 2.0f), cpu(rows * n);
    const std::vector<float> dy = random_normal(rows * n, rng, 1.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::span<float> yr(y.data() + r * n, n);
      ops::softmax(yr, yr);
      grad::softmax(yr, std::span(dy).subspan(r * n, n), std::span(cpu).subspan(r * n, n));
    }
    DeviceTensor out;
    grad::softmax(DeviceTensor::upload(d, y, {rows, n}), DeviceTensor::upload(d, dy, {rows, n}), out);
    expect_gpu_contract(backend, "tensor_softmax_backward", out.download(), cpu, std::to_string(rows) + " rows of " + std::to_string(n));
  }
}

// y = W x for every weight type of kMatvecTypes: the CPU's quant_matvec (which quantizes the activations
// for the quantized types) against the device's.
inline void check_matvec(const Device& d, const char* backend, std::mt19937_64& rng) {
  const std::size_t rows = 300, cols = 512;
  for (QuantType t : kMatvecTypes) {
    const std::vector<float> wf = random_normal(rows * cols, rng, 0.5f), x = random_normal(cols, rng, 1.0f);
    std::vector<float> cpu(rows);
    DeviceTensor w;
    if (t == QuantType::F32) {
      ops::matvec(rows, cols, wf.data(), cols, x, cpu);
      w = DeviceTensor::upload(d, wf, {rows, cols});
    } else {
      const std::size_t rb = quant_row_bytes(t, cols);
      std::vector<std::byte> q(rows * rb);
      for (std::size_t r = 0; r < rows; ++r) quantize(t, std::span(wf).subspan(r * cols, cols), std::span(q).subspan(r * rb, rb));
      quant_matvec(t, q, rows, cols, x, cpu);
      w = DeviceTensor::upload_quantized(d, t, q, rows, cols);
    }
    DeviceTensor y;
    ops::matvec(w, DeviceTensor::upload(d, x), y);
    expect_gpu_contract(backend, "tensor_matvec_" + std::string(quant_info(t).name), y.download(), cpu,
                        std::to_string(rows) + "x" + std::to_string(cols));
  }
}

// bf16 both ways, bit-exact with the CPU's, on x with the cases of bf16 rounding put in: ties to even
// either way, a carry into the exponent, overflow to infinity, subnormals, signed zero and NaNs (quiet and
// signalling, whose payload the narrowing keeps with the quiet bit set).
inline void check_bf16_conversions(const Device& d, const char* backend, std::vector<float> x) {
  const std::uint32_t specials[] = {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f7fffffu, 0xff7fffffu, 0x00000001u,
                                    0x80400000u, 0x80000000u, 0x7fc00000u, 0x7f800001u, 0xffa00000u, 0x7f800000u};
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n && i < std::size(specials); ++i) std::memcpy(&x[(i * 11 + 3) % n], &specials[i], 4);
  std::vector<std::uint16_t> cpu(n), got(n);
  ops::f32_to_bf16(x, cpu);
  DeviceTensor h;
  ops::f32_to_bf16(DeviceTensor::upload(d, x), h);
  h.download_bf16(got);
  expect_gpu_contract(backend, "tensor_f32_to_bf16", as_floats(got), as_floats(cpu), "n=" + std::to_string(n));
  std::vector<float> back(n);
  ops::bf16_to_f32(cpu, back);
  DeviceTensor f;
  ops::bf16_to_f32(DeviceTensor::upload_bf16(d, cpu), f);
  expect_gpu_contract(backend, "tensor_bf16_to_f32", f.download(), back, "n=" + std::to_string(n));
}

// Conversions: bit-exact with the CPU's (finite values, infinities, f16 subnormals and overflow).
inline void check_conversions(const Device& d, const char* backend, std::mt19937_64& rng) {
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, std::size_t{70000}}) {
    std::vector<float> x = random_normal(n, rng, 100.0f);
    const float specials[] = {0.0f, -0.0f, 1e-6f, -3e-7f, 65504.0f, 65520.0f, 1e9f, INFINITY, -INFINITY, 5.96e-8f};
    for (std::size_t i = 0; i < n && i < std::size(specials); ++i) x[i * 7 % n] = specials[i];
    std::vector<std::uint16_t> cpu(n);
    ops::f32_to_f16(x, cpu);
    DeviceTensor h;
    ops::f32_to_f16(DeviceTensor::upload(d, x), h);
    std::vector<std::uint16_t> got(n);
    h.download_f16(got);
    expect_gpu_contract(backend, "tensor_f32_to_f16", as_floats(got), as_floats(cpu), "n=" + std::to_string(n));
    std::vector<float> back(n);
    ops::f16_to_f32(cpu, back);
    DeviceTensor f;
    ops::f16_to_f32(DeviceTensor::upload_f16(d, cpu), f);
    expect_gpu_contract(backend, "tensor_f16_to_f32", f.download(), back, "n=" + std::to_string(n));
    check_bf16_conversions(d, backend, x);
  }
}

// A chain of ops whose intermediates are dropped at once, then one download: what enqueued ops use must
// stay alive until the device has run them (Note [Device op list]).
inline void check_chain(const Device& d, std::mt19937_64& rng) {
  const std::size_t n = 10000;
  const std::vector<float> x = random_normal(n, rng, 1.0f);
  std::vector<float> s(n), t(n), u(n);
  ops::scale(x, 0.5f, s);
  ops::silu(s, t);
  ops::add(t, x, u);
  const double cpu = ops::sum(u);
  DeviceTensor total;
  {
    const DeviceTensor dx = DeviceTensor::upload(d, x);
    DeviceTensor ds, dt, du;
    ops::scale(dx, 0.5f, ds);
    ops::silu(ds, dt);
    ops::add(dt, dx, du);
    ops::sum(du, total);
  }  // every input and intermediate dropped before the device ran anything (on a deferred queue)
  const float got = total.download()[0];
  EXPECT_NEAR(got, cpu, 1e-4 * std::fabs(cpu) + 1e-3) << "chain of scale, silu, add, sum on " << d.str();
  synchronize(d);  // nothing queued: returns
}

// Matrix::matmul forced onto the device per object and globally (offload.h), against the CPU's product;
// an operand forced to a CPU tier keeps the product on the CPU even under a global device.
inline void check_matrix_forced(const Device& d, const char* backend, std::mt19937_64& rng) {
  const std::size_t m = 70, k = 90, n = 50;
  const Matrix a = Matrix::from(m, k, random_normal(m * k, rng)), b = Matrix::from(k, n, random_normal(k * n, rng));
  std::vector<float> cpu(m * n);
  ops::matmul(m, n, k, a.data(), k, b.data(), n, cpu.data(), n);
  Matrix ad = a;
  ad.on(d);
  const Matrix c = Matrix::matmul(ad, b);
  EXPECT_EQ(c.device(), std::optional<Device>(d));
  expect_gpu_contract(backend, "tensor_matmul", std::vector<float>(c.data(), c.data() + m * n), cpu, "Matrix::matmul on(device)");
  set_offload(Offload::to(d));
  const Matrix g = Matrix::matmul(a, b);
  expect_gpu_contract(backend, "tensor_matmul", std::vector<float>(g.data(), g.data() + m * n), cpu, "Matrix::matmul under set_offload");
  Matrix at = a;
  at.on(best());
  const Matrix t = Matrix::matmul(at, b);  // a CPU tier forced on the object wins over the global device
  reset_offload();
  EXPECT_EQ(t.backend(), std::optional<Backend>(best()));
  EXPECT_EQ(std::vector<float>(t.data(), t.data() + m * n), cpu);
}

}  // namespace trueno::test
