// Running any kernel kind from a table on (misaligned) copies of the inputs, and the f64 references.
#include "harness.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/half.h"
#include "quant/blocks.h"
#include "quant/pack_x8.h"
#include "trueno/quant.h"

namespace trueno::test {
namespace {

// The compiler's own half type: an independent f16 reference (hardware or libgcc/compiler-rt
// conversion; clang has no _Float16 for WebAssembly, only the storage type __fp16).
#if defined(__aarch64__) || defined(__wasm__)
using half_t = __fp16;
#else
using half_t = _Float16;
#endif

using cpu::Kind;

// A copy of v starting `offset` elements into a fresh allocation, so kernels see unaligned pointers.
template <class T>
struct Shifted {
  std::vector<T> storage;
  T* p;
  Shifted(const std::vector<T>& v, std::size_t offset) : storage(v.size() + offset + 1) {
    p = storage.data() + offset;
    std::copy(v.begin(), v.end(), p);
  }
  Shifted(std::size_t n, std::size_t offset) : storage(n + offset + 1) { p = storage.data() + offset; }
  std::vector<T> get(std::size_t n) const { return std::vector<T>(p, p + n); }
};

double sigmoid64(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double elementwise64(std::string_view op, double a, double b, double c, const Inputs& in) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "swiglu") return a * sigmoid64(a) * b;
  if (op == "scale") return a * static_cast<double>(in.alpha);
  if (op == "clamp") return std::min<double>(std::max<double>(a, in.lo), in.hi);
  if (op == "fma") return static_cast<double>(static_cast<float>(a * b)) + c;
  if (op == "abs") return std::fabs(a);
  if (op == "relu") return a > 0 ? a : 0.0;
  if (op == "exp") return std::exp(a);
  if (op == "sigmoid") return sigmoid64(a);
  if (op == "tanh") return std::tanh(a);
  // 0.5a(1 + tanh(v)) written as a*sigmoid(2v): the same value without the f64 cancellation at large -a.
  if (op == "gelu_tanh") return a * sigmoid64(2.0 * 0.7978845608028654 * (a + 0.044715 * a * a * a));
  if (op == "gelu_erf") return 0.5 * a * std::erfc(-a / std::sqrt(2.0));
  if (op == "silu") return a * sigmoid64(a);
  throw std::logic_error("no f64 reference for element-wise op " + std::string(op));
}

std::uint16_t bf16_reference(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<std::uint16_t>((x >> 16) | 0x40);
  if (std::isinf(f)) return static_cast<std::uint16_t>(x >> 16);
  // The two bf16 neighbours of f (toward zero and away), chosen by distance in double; ties to even.
  const std::uint32_t lo = x & 0xffff0000u, hi = lo + 0x10000u;
  float flo, fhi;
  std::memcpy(&flo, &lo, 4);
  std::memcpy(&fhi, &hi, 4);
  const double dhi = std::isinf(fhi) ? std::copysign(std::ldexp(1.0, 128), fhi) : fhi;  // "inf" as 2^128
  const double dl = std::fabs(static_cast<double>(f) - flo), dh = std::fabs(dhi - f);
  const bool take_lo = dl < dh || (dl == dh && ((lo >> 16) & 1) == 0);
  return static_cast<std::uint16_t>((take_lo ? lo : hi) >> 16);
}

// The min part dmin*m of each element of a Q4_K/Q5_K row (0 for other types).
std::vector<double> min_parts(QuantType type, const std::vector<std::byte>& row, std::size_t n) {
  std::vector<double> parts(n, 0.0);
  if (type != QuantType::Q4_K && type != QuantType::Q5_K) return parts;
  const std::size_t bb = quant_info(type).block_bytes;
  for (std::size_t i = 0; i < n; ++i) {
    quant::BlockQ4_K b;  // d, dmin and scales sit at the same offsets in Q5_K
    std::memcpy(&b, row.data() + (i / 256) * bb, 16);
    int sc, m;
    quant::k_scale_min(b.scales, static_cast<int>(i % 256 / 32), &sc, &m);
    parts[i] = static_cast<double>(detail::f16_bits_to_f32(b.dmin)) * m;
  }
  return parts;
}

}  // namespace

bool is_vector_kind(Kind kind) {
  return kind != Kind::Matmul && kind != Kind::Matvec && kind != Kind::Transpose && kind != Kind::QDot &&
         kind != Kind::QDotRows && kind != Kind::QDotX8 && kind != Kind::Dequant;
}

void qdot_types(std::string_view op, int* w, int* x) {
  // dot_<weight>_<activation>, e.g. dot_q4_k_q8_k
  const std::string_view rest = op.substr(4);
  const std::size_t split = rest.rfind("_q8_");
  *w = static_cast<int>(parse_quant_type(rest.substr(0, split)));
  *x = static_cast<int>(parse_quant_type(rest.substr(split + 1)));
}

Output run_kernel(const cpu::KernelInfo& k, const cpu::KernelTable& t, const Inputs& in) {
  Output out;
  const std::size_t n = in.n, off = in.offset;
  Shifted<float> a(in.a, off), b(in.b, off + 1), c(in.c, off + 2), o(std::max(n, in.m * in.ldc + in.k * in.ldb + in.m), off + 3);
  switch (k.kind) {
    case Kind::Binary: k.fn<cpu::Binary>(t)(a.p, b.p, o.p, n); out.f = o.get(n); break;
    case Kind::Unary: k.fn<cpu::Unary>(t)(a.p, o.p, n); out.f = o.get(n); break;
    case Kind::Scale: k.fn<cpu::Scale>(t)(a.p, in.alpha, o.p, n); out.f = o.get(n); break;
    case Kind::Clamp: k.fn<cpu::Clamp>(t)(a.p, in.lo, in.hi, o.p, n); out.f = o.get(n); break;
    case Kind::Ternary: k.fn<cpu::Ternary>(t)(a.p, b.p, c.p, o.p, n); out.f = o.get(n); break;
    case Kind::Reduce: out.value = k.fn<cpu::Reduce>(t)(a.p, n); break;
    case Kind::Reduce2: out.value = k.fn<cpu::Reduce2>(t)(a.p, b.p, n); break;
    case Kind::ArgReduce: out.index = k.fn<cpu::ArgReduce>(t)(a.p, n); break;
    case Kind::Row: k.fn<cpu::Row>(t)(a.p, o.p, n); out.f = o.get(n); break;
    case Kind::RmsNorm: k.fn<cpu::RmsNorm>(t)(a.p, b.p, in.eps, o.p, n); out.f = o.get(n); break;
    case Kind::LayerNorm: k.fn<cpu::LayerNorm>(t)(a.p, b.p, c.p, in.eps, o.p, n); out.f = o.get(n); break;
    case Kind::ToHalf: {
      Shifted<std::uint16_t> h(n, off + 1);
      k.fn<cpu::ToHalf>(t)(a.p, h.p, n);
      out.h = h.get(n);
      break;
    }
    case Kind::FromHalf: {
      Shifted<std::uint16_t> h(in.h, off + 1);
      k.fn<cpu::FromHalf>(t)(h.p, o.p, n);
      out.f = o.get(n);
      break;
    }
    case Kind::Matmul: {
      Shifted<float> cm(in.m * in.ldc, off + 3);
      std::fill(cm.storage.begin(), cm.storage.end(), std::nanf(""));  // the kernel must write every C element
      k.fn<cpu::Matmul>(t)(in.m, in.nn, in.k, a.p, in.lda, b.p, in.ldb, cm.p, in.ldc);
      for (std::size_t i = 0; i < in.m; ++i)
        for (std::size_t j = 0; j < in.nn; ++j) out.f.push_back(cm.p[i * in.ldc + j]);
      break;
    }
    case Kind::Matvec: {
      Shifted<float> y(in.m, off + 3);
      k.fn<cpu::Matvec>(t)(in.m, in.k, a.p, in.lda, b.p, y.p);
      out.f = y.get(in.m);
      break;
    }
    case Kind::Dequant: {
      Shifted<std::byte> w(in.wq, off);
      Shifted<float> y(in.n, off + 2);
      k.fn<cpu::Dequant>(t)(w.p, y.p, in.nb);
      out.f = y.get(in.n);
      break;
    }
    case Kind::QDotRows: {
      Shifted<std::byte> w(in.wq, off), xq(in.xq, off + 1);
      Shifted<float> y(in.m, off + 2);
      k.fn<cpu::QDotRows>(t)(w.p, xq.p, in.xq.size() / in.m, in.m, in.nb, y.p);
      out.f = y.get(in.m);
      break;
    }
    case Kind::QDotX8: {  // in.wq: 8 rows of the weight type, packed here (Note [Interleaved rows])
      int wt, xt;
      qdot_types("dot_" + std::string(k.name.substr(7)), &wt, &xt);  // dot_x8_X -> dot_X
      const quant::X8Layout layout = quant::x8_layout(static_cast<QuantType>(wt));
      std::vector<std::byte> packed(in.nb * layout.block_bytes);
      layout.pack(in.wq.data(), in.wq.size() / 8, in.nb, packed.data());
      Shifted<std::byte> w(packed, off), xq(in.xq, off + 1);
      Shifted<float> y(8, off + 2);
      k.fn<cpu::QDotX8>(t)(w.p, xq.p, in.nb, y.p);
      out.f = y.get(8);
      break;
    }
    case Kind::QDot: {
      Shifted<std::byte> w(in.wq, off), xq(in.xq, off + 1);
      out.value = k.fn<cpu::QDot>(t)(w.p, xq.p, in.nb);
      break;
    }
    case Kind::Transpose: {  // A is m x k (lda), B is k x m (ldb)
      Shifted<float> bt(in.k * in.ldb, off + 3);
      k.fn<cpu::Transpose>(t)(in.m, in.k, a.p, in.lda, bt.p, in.ldb);
      for (std::size_t j = 0; j < in.k; ++j)
        for (std::size_t i = 0; i < in.m; ++i) out.f.push_back(bt.p[j * in.ldb + i]);
      break;
    }
  }
  return out;
}

Reference reference64(const cpu::KernelInfo& k, const Inputs& in) {
  Reference r;
  const std::size_t n = in.n;
  const auto& x = in.a;
  switch (k.kind) {
    case Kind::Binary:
    case Kind::Unary:
    case Kind::Scale:
    case Kind::Clamp:
    case Kind::Ternary:
      r.has_f = true;
      for (std::size_t i = 0; i < n; ++i)
        r.f.push_back(elementwise64(k.name, x[i], in.b.empty() ? 0.0 : in.b[i], in.c.empty() ? 0.0 : in.c[i], in));
      break;
    case Kind::Reduce:
    case Kind::Reduce2:
    case Kind::ArgReduce: {
      r.has_value = true;
      double s = 0, sa = 0, sp = 0, sq = 0;
      for (std::size_t i = 0; i < n; ++i) {
        s += x[i], sa += std::fabs(x[i]), sq += static_cast<double>(x[i]) * x[i];
        if (!in.b.empty()) r.value += static_cast<double>(x[i]) * in.b[i], sp += std::fabs(static_cast<double>(x[i]) * in.b[i]);
      }
      r.abs_sum = sa;
      const double mean = n ? s / n : 0.0;
      if (k.name == "sum") r.value = s;
      if (k.name == "dot") r.magnitude = sp;
      if (k.name == "norm_l2") r.value = std::sqrt(sq), r.magnitude = r.value;
      if (k.name == "mean") r.value = mean, r.abs_sum = sa / n;
      if (k.name == "variance") {
        double v = 0;
        for (std::size_t i = 0; i < n; ++i) v += (x[i] - mean) * (x[i] - mean);
        r.value = v / n, r.magnitude = r.value, r.extra = gamma_n(n) * gamma_n(n) * (sa / n) * (sa / n);
      }
      if (k.name == "max" || k.name == "min" || k.name == "argmax" || k.name == "argmin") {
        const bool is_max = k.name == "max" || k.name == "argmax";
        std::size_t best = 0;
        for (std::size_t i = 0; i < n; ++i) {
          if (std::isnan(x[i])) { best = i; break; }
          if (is_max ? x[i] > x[best] : x[i] < x[best]) best = i;
        }
        r.index = best, r.has_index = true, r.value = n ? x[best] : 0.0;
      }
      break;
    }
    case Kind::Row: {
      r.has_f = true;
      double m = -INFINITY, s = 0;
      for (std::size_t i = 0; i < n; ++i) m = std::max<double>(m, x[i]);
      for (std::size_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
      for (std::size_t i = 0; i < n; ++i) {
        if (k.name == "softmax") {
          r.f.push_back(std::exp(x[i] - m) / s);
          r.mag.push_back(r.f.back() * (1.0 + std::fabs(x[i] - m)));
        } else {
          r.f.push_back(x[i] - m - std::log(s));
          r.mag.push_back(std::fabs(x[i] - m) + std::fabs(std::log(s)) + 1.0);
        }
      }
      break;
    }
    case Kind::RmsNorm: {
      r.has_f = true;
      double ss = 0;
      for (std::size_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
      const double rr = 1.0 / std::sqrt(ss / n + in.eps);
      for (std::size_t i = 0; i < n; ++i) {
        r.f.push_back(x[i] * rr * in.b[i]);
        r.mag.push_back(std::fabs(r.f.back()));
      }
      break;
    }
    case Kind::LayerNorm: {
      r.has_f = true;
      double s = 0, sa = 0;
      for (std::size_t i = 0; i < n; ++i) s += x[i], sa += std::fabs(x[i]);
      const double m = s / n;
      double v = 0;
      for (std::size_t i = 0; i < n; ++i) v += (x[i] - m) * (x[i] - m);
      const double rr = 1.0 / std::sqrt(v / n + in.eps);
      for (std::size_t i = 0; i < n; ++i) {
        r.f.push_back((x[i] - m) * rr * in.b[i] + in.c[i]);
        r.mag.push_back(std::fabs((x[i] - m) * rr * in.b[i]) + (sa / n) * rr * std::fabs(in.b[i]) + std::fabs(in.c[i]));
      }
      break;
    }
    case Kind::ToHalf:
      r.has_h = true;
      for (std::size_t i = 0; i < n; ++i) {
        if (k.name == "f32_to_f16") {
          const half_t h = static_cast<half_t>(x[i]);
          std::uint16_t bits;
          std::memcpy(&bits, &h, 2);
          r.h.push_back(bits);
        } else {
          r.h.push_back(bf16_reference(x[i]));
        }
      }
      break;
    case Kind::FromHalf:
      r.has_f = true;
      for (std::size_t i = 0; i < n; ++i) {
        if (k.name == "f16_to_f32") {
          half_t h;
          std::memcpy(&h, &in.h[i], 2);
          r.f.push_back(static_cast<float>(h));
        } else {
          const std::uint32_t u = static_cast<std::uint32_t>(in.h[i]) << 16;
          float f;
          std::memcpy(&f, &u, 4);
          r.f.push_back(f);
        }
      }
      break;
    case Kind::Matmul: {
      r.has_f = true;
      double frob = 0;
      for (std::size_t i = 0; i < in.m; ++i)
        for (std::size_t j = 0; j < in.nn; ++j) {
          double s = 0, sa = 0;
          for (std::size_t p = 0; p < in.k; ++p) {
            const double prod = static_cast<double>(in.a[i * in.lda + p]) * in.b[p * in.ldb + j];
            s += prod, sa += std::fabs(prod);
          }
          r.f.push_back(s);
          frob += sa * sa;
        }
      r.frob_mag = std::sqrt(frob);
      break;
    }
    case Kind::Matvec:
      r.has_f = true;
      for (std::size_t i = 0; i < in.m; ++i) {
        double s = 0, sa = 0;
        for (std::size_t p = 0; p < in.k; ++p) {
          const double prod = static_cast<double>(in.a[i * in.lda + p]) * in.b[p];
          s += prod, sa += std::fabs(prod);
        }
        r.f.push_back(s);
        r.mag.push_back(sa);
      }
      break;
    case Kind::QDotRows:
    case Kind::QDotX8:
      break;  // checked against the single-row kernel (rows_equal_single_dot), itself checked against f64
    case Kind::Dequant: {
      // Exact values; magnitude per element = |scale part| + |min part| (rounded separately in f32).
      const auto type = parse_quant_type(k.name.substr(8));
      std::vector<double> exact(in.n);
      dequantize_exact(QuantRow::view(type, in.wq, in.n), exact);
      const std::vector<double> min_part = min_parts(type, in.wq, in.n);
      r.has_f = true;
      r.f = exact;
      for (std::size_t i = 0; i < in.n; ++i) r.mag.push_back(std::fabs(exact[i] + min_part[i]) + min_part[i]);
      break;
    }
    case Kind::QDot: {
      // f64 dot of the dequantized operands; magnitude = sum of |scale part| and |min part| products.
      int wt, xt;
      qdot_types(k.name, &wt, &xt);
      const auto wtype = static_cast<QuantType>(wt), xtype = static_cast<QuantType>(xt);
      const std::size_t n = in.nb * quant_info(wtype).block_elems;
      std::vector<double> w(n), xd(n);
      dequantize_exact(QuantRow::view(wtype, in.wq, n), w);
      dequantize_exact(QuantRow::view(xtype, in.xq, n), xd);
      const std::vector<double> min_part = min_parts(wtype, in.wq, n);
      std::vector<double> dx(n, 0.0);
      const std::size_t xb = quant_info(xtype).block_elems;
      for (std::size_t b0 = 0; b0 < n; b0 += xb) {
        double amax = 0;
        for (std::size_t i = b0; i < b0 + xb; ++i) amax = std::max(amax, std::fabs(static_cast<double>(in.a[i])));
        for (std::size_t i = b0; i < b0 + xb; ++i) dx[i] = amax / 127.0;
      }
      r.has_value = true;
      const std::size_t wb = quant_info(wtype).block_elems;
      for (std::size_t b0 = 0; b0 < n; b0 += wb) {
        // Per weight block, the kernel rounds d*sumi and dmin*summ (exact integer sums): the
        // magnitude is |scale part . x_q| + |min part . x_q| summed over blocks.
        double scale_dot = 0, min_dot = 0;
        for (std::size_t i = b0; i < b0 + wb; ++i) {
          scale_dot += (w[i] + min_part[i]) * xd[i];
          min_dot += min_part[i] * xd[i];
          r.value += w[i] * xd[i];
          r.value_unquantized += w[i] * in.a[i];
          r.act_err += std::fabs(w[i]) * dx[i] * 0.5;
        }
        r.magnitude += std::fabs(scale_dot) + std::fabs(min_dot);
      }
      break;
    }
    case Kind::Transpose:
      r.has_f = true;
      for (std::size_t j = 0; j < in.k; ++j)
        for (std::size_t i = 0; i < in.m; ++i) r.f.push_back(in.a[i * in.lda + j]);
      break;
  }
  return r;
}

}  // namespace trueno::test
