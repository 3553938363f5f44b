// The contract test: every op of the kernel list on every CPU backend available here, checked against
// the obligations in contracts/*.yaml on fresh random inputs (seed printed; TRUENO_TEST_SEED
// reproduces), at awkward lengths, from unaligned pointers, and with special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "contract_spec.h"
#include "cpu/dispatch.h"
#include "harness.h"
#include "trueno/backend.h"
#include "trueno/quant.h"

namespace trueno::test {
namespace {

using cpu::Kind;

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("TRUENO_TEST_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::cout << "[contract] seed " << s << " (rerun with TRUENO_TEST_SEED=" << s << ")\n";
    return s;
  }();
  return seed;
}

// Half uniform over the domain, half log-uniform magnitudes (small values matter for tanh, erfc...).
// A draw in [0, n) as a size (std::size_t is 32 bits on wasm32, the generator's values 64).
std::size_t below(std::mt19937_64& rng, std::size_t n) { return static_cast<std::size_t>(rng() % n); }

float draw(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng) < 0.5) return static_cast<float>(lo + (hi - lo) * u(rng));
  const double top = std::max(std::fabs(lo), std::fabs(hi));
  const double mag = std::pow(10.0, -6.0 + (std::log10(top) + 6.0) * u(rng));
  const double v = (u(rng) < 0.5 ? -1.0 : 1.0) * mag;
  return static_cast<float>(std::clamp(v, lo, hi));
}

std::vector<float> draws(std::mt19937_64& rng, std::size_t n, double lo, double hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = draw(rng, lo, hi);
  return v;
}

const float kSpecials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 1.4e-45f, INFINITY, -INFINITY, NAN,
                           3.4e38f, -3.4e38f, 1.17549435e-38f, 1.0f, -1.0f, 0.5f};

Inputs vector_inputs(const cpu::KernelInfo& k, const OpContract& c, std::mt19937_64& rng, std::size_t n,
                     std::size_t offset) {
  Inputs in;
  in.n = n, in.offset = offset;
  in.a = draws(rng, n, c.lo, c.hi);
  switch (k.kind) {
    case Kind::Binary: in.b = draws(rng, n, c.lo, c.hi); break;
    case Kind::Ternary: in.b = draws(rng, n, c.lo, c.hi), in.c = draws(rng, n, c.lo, c.hi); break;
    case Kind::Reduce2: in.b = draws(rng, n, c.lo, c.hi); break;
    case Kind::Scale: in.alpha = draw(rng, -1e3, 1e3); break;
    case Kind::RmsNorm: in.b = draws(rng, n, 0.5, 2.0); break;
    case Kind::LayerNorm: in.b = draws(rng, n, 0.5, 2.0), in.c = draws(rng, n, -1.0, 1.0); break;
    case Kind::FromHalf:
      in.h.resize(n);
      for (auto& h : in.h) h = static_cast<std::uint16_t>(rng());
      if (k.name == "bf16_to_f32" || k.name == "f16_to_f32") break;
      break;
    default: break;
  }
  return in;
}

Inputs matrix_inputs(std::mt19937_64& rng, std::size_t m, std::size_t nn, std::size_t kk, std::size_t pad,
                     std::size_t offset, Kind kind) {
  Inputs in;
  in.m = m, in.nn = nn, in.k = kk, in.offset = offset;
  in.lda = kk + pad, in.ldb = (kind == Kind::Transpose ? m : nn) + pad, in.ldc = nn + pad;
  in.a = draws(rng, m * in.lda, -1.0, 1.0);
  in.b = draws(rng, kind == Kind::Matvec ? kk : kk * in.ldb, -1.0, 1.0);
  return in;
}

struct Checker {
  const cpu::KernelInfo& k;
  const OpContract& contract;
  Backend backend;
  std::string context;  // shape and seed, printed on failure

  bool applies(const Obligation& o) const { return o.backends == "all" || backend != Backend::Scalar; }

  // Obligations on random finite inputs.
  void check(const Inputs& in, const Output& y, const Output& scalar, const Reference& r) const {
    for (const auto& o : contract.obligations) {
      if (!applies(o)) continue;
      SCOPED_TRACE(o.type + ": " + o.bound + " [" + context + "]");
      if (o.type == "simd_vs_scalar_ulp") {
        const auto max_ulp = static_cast<std::int64_t>(o.num("max_ulp"));
        for (std::size_t i = 0; i < y.f.size(); ++i)
          ASSERT_LE(ulp_distance(y.f[i], scalar.f[i]), max_ulp)
              << "element " << i << ": " << y.f[i] << " vs scalar " << scalar.f[i] << " input " << in.a[i];
      } else if (o.type == "simd_vs_scalar_exact") {
        exact(y, backend == Backend::Scalar ? from_reference(r) : scalar);
      } else if (o.type == "f64_ulp") {
        const auto max_ulp = static_cast<std::int64_t>(o.num("max_ulp"));
        if (r.has_h) {
          for (std::size_t i = 0; i < y.h.size(); ++i) ASSERT_EQ(y.h[i], r.h[i]) << "element " << i << " input " << in.a[i];
        }
        for (std::size_t i = 0; i < y.f.size() && r.has_f; ++i)
          ASSERT_LE(ulp_distance(y.f[i], static_cast<float>(r.f[i])), max_ulp)
              << "element " << i << ": " << y.f[i] << " vs f64 " << r.f[i] << " input " << (in.a.empty() ? 0.0f : in.a[i]);
      } else if (o.type == "f64_abs_rel") {
        const double abs = o.num("abs"), rel = o.num("rel");
        for (std::size_t i = 0; i < y.f.size(); ++i)
          ASSERT_LE(std::fabs(y.f[i] - r.f[i]), abs + rel * std::fabs(r.f[i]))
              << "element " << i << ": " << y.f[i] << " vs f64 " << r.f[i] << " input " << in.a[i];
      } else if (o.type == "reduction_f64") {
        const double bound = o.num("factor") * gamma_n(in.n) * r.magnitude + o.num("ulps") * kU * std::fabs(r.value) + r.extra;
        ASSERT_LE(std::fabs(y.value - r.value), bound) << "got " << y.value << ", f64 " << r.value;
      } else if (o.type == "compensated_f64") {
        const double g = gamma_n(in.n);
        const double bound = o.num("rel") * kU * std::fabs(r.value) + o.num("factor") * g * g * r.abs_sum;
        ASSERT_LE(std::fabs(y.value - r.value), bound) << "got " << y.value << ", f64 " << r.value;
      } else if (o.type == "rowwise_f64") {
        const double scale = o.num("ulps") * kU + o.num("factor") * gamma_n(in.n);
        for (std::size_t i = 0; i < y.f.size(); ++i)
          ASSERT_LE(std::fabs(y.f[i] - r.f[i]), scale * r.mag[i]) << "element " << i << ": " << y.f[i] << " vs f64 " << r.f[i];
      } else if (o.type == "gemm_frobenius_f64") {
        double err = 0;
        for (std::size_t i = 0; i < y.f.size(); ++i) err += (y.f[i] - r.f[i]) * (y.f[i] - r.f[i]);
        ASSERT_LE(std::sqrt(err), o.num("factor") * gamma_n(in.k) * r.frob_mag);
      } else if (o.type == "rows_equal_single_dot") {
        const std::string single = "dot_" + std::string(k.name.substr(9));  // dot_rows_X -> dot_X
        const cpu::KernelInfo* one = cpu::find_kernel(single);
        ASSERT_NE(one, nullptr) << single;
        const auto* table = cpu::table_or_null(backend);
        const std::size_t stride = in.xq.size() / in.m;
        for (std::size_t i = 0; i < in.m; ++i) {
          const float want = one->fn<cpu::QDot>(*table)(in.wq.data(), in.xq.data() + i * stride, in.nb);
          ASSERT_EQ(std::memcmp(&y.f[i], &want, 4), 0) << "row " << i << ": " << y.f[i] << " vs single-row " << want;
        }
      } else if (o.type == "x8_equal_single_dot") {
        // Against the scalar tier's single-row dot (every tier's single-row dot equals it bit for bit).
        const std::string single = "dot_" + std::string(k.name.substr(7));  // dot_x8_X -> dot_X
        const cpu::KernelInfo* one = cpu::find_kernel(single);
        ASSERT_NE(one, nullptr) << single;
        const auto* scalar_table = cpu::table_or_null(Backend::Scalar);
        const std::size_t row_bytes = in.wq.size() / 8;
        for (std::size_t r = 0; r < 8; ++r) {
          const float want = one->fn<cpu::QDot>(*scalar_table)(in.wq.data() + r * row_bytes, in.xq.data(), in.nb);
          // NaN (random bytes: f16 NaN scales) matches any NaN: which payload survives depends on operand order.
          if (std::isnan(want) && std::isnan(y.f[r])) continue;
          ASSERT_EQ(std::memcmp(&y.f[r], &want, 4), 0) << "row " << r << ": " << y.f[r] << " vs scalar single-row " << want;
        }
      } else if (o.type == "dequant_f64") {
        for (std::size_t i = 0; i < y.f.size(); ++i)
          ASSERT_LE(std::fabs(y.f[i] - r.f[i]), o.num("ulps") * kU * r.mag[i]) << "element " << i << ": " << y.f[i]
                                                                            << " vs exact " << r.f[i];
      } else if (o.type == "qdot_f64") {
        const double bound = o.num("factor") * gamma_n(static_cast<double>(in.nb) + 2.0) * r.magnitude;
        ASSERT_LE(std::fabs(y.value - r.value), bound) << "got " << y.value << ", f64 of the quantized operands " << r.value;
      } else if (o.type == "qdot_activation_f64") {
        const double bound = r.act_err + o.num("factor") * gamma_n(static_cast<double>(in.nb) + 2.0) * r.magnitude;
        ASSERT_LE(std::fabs(y.value - r.value_unquantized), bound)
            << "got " << y.value << ", f64 with unquantized activations " << r.value_unquantized;
      } else if (o.type == "matvec_f64") {
        for (std::size_t i = 0; i < y.f.size(); ++i)
          ASSERT_LE(std::fabs(y.f[i] - r.f[i]), o.num("factor") * gamma_n(in.k) * r.mag[i]) << "row " << i;
      } else {
        FAIL() << "unknown obligation type " << o.type;
      }
    }
  }

  static Output from_reference(const Reference& r) {
    Output o;
    for (double v : r.f) o.f.push_back(static_cast<float>(v));
    o.h = r.h;
    o.value = static_cast<float>(r.value);
    o.index = r.index;
    return o;
  }

  void exact(const Output& y, const Output& want) const {
    ASSERT_EQ(y.h, want.h);
    ASSERT_EQ(y.index, want.index);
    ASSERT_EQ(ulp_distance(y.value, want.value), 0) << y.value << " vs " << want.value;
    ASSERT_EQ(y.f.size(), want.f.size());
    for (std::size_t i = 0; i < y.f.size(); ++i) {
      if (k.kind == Kind::FromHalf || k.kind == Kind::Dequant) {  // identical bits, NaN payloads included
        ASSERT_EQ(std::memcmp(&y.f[i], &want.f[i], 4), 0) << "element " << i << ": " << y.f[i] << " vs " << want.f[i];
      } else {
        ASSERT_EQ(ulp_distance(y.f[i], want.f[i]), 0) << "element " << i;
      }
    }
  }

  // Special values: NaN/inf classes must match the scalar reference; exact and ULP obligations apply.
  void check_specials(const Inputs& in, const Output& y, const Output& scalar) const {
    SCOPED_TRACE("special values [" + context + "]");
    for (const auto& o : contract.obligations) {
      if (o.type == "simd_vs_scalar_ulp") {
        for (std::size_t i = 0; i < y.f.size(); ++i)
          ASSERT_LE(ulp_distance(y.f[i], scalar.f[i]), static_cast<std::int64_t>(o.num("max_ulp")))
              << "element " << i << ": " << y.f[i] << " vs scalar " << scalar.f[i] << " input " << in.a[i];
      }
      if (o.type == "simd_vs_scalar_exact") exact(y, scalar);
    }
    for (std::size_t i = 0; i < y.f.size(); ++i)
      ASSERT_TRUE(same_class(y.f[i], scalar.f[i])) << "element " << i << ": " << y.f[i] << " vs scalar " << scalar.f[i];
    ASSERT_TRUE(same_class(y.value, scalar.value)) << y.value << " vs scalar " << scalar.value;
  }
};

struct Param {
  std::string op;
  Backend backend;
};

void PrintTo(const Param& p, std::ostream* os) { *os << p.op << " on " << name(p.backend); }

class KernelContract : public ::testing::TestWithParam<Param> {};

TEST_P(KernelContract, Obligations) {
  const Param& p = GetParam();
  const std::uint64_t seed = base_seed();
  if (!is_available(p.backend)) {
    const auto report = backend_report();
    GTEST_SKIP() << "skipped: backend " << name(p.backend) << " unavailable here: "
                 << report[static_cast<int>(p.backend)].reason;
  }
  const cpu::KernelInfo* k = cpu::find_kernel(p.op);
  ASSERT_NE(k, nullptr);
  const auto& all = contracts();
  auto it = all.find(p.op);
  ASSERT_NE(it, all.end()) << "op '" << p.op << "' has no contract in " << contracts_dir();
  const OpContract& contract = it->second;
  const cpu::KernelTable& table = *cpu::table_or_null(p.backend);
  const cpu::KernelTable& scalar = *cpu::table_or_null(Backend::Scalar);
  std::mt19937_64 rng(seed ^ std::hash<std::string>{}(p.op + std::string(name(p.backend))));

  auto run_case = [&](const Inputs& in, const std::string& shape, bool specials) {
    Checker ch{*k, contract, p.backend, shape + ", seed " + std::to_string(seed)};
    const Output y = run_kernel(*k, table, in);
    const Output s = run_kernel(*k, scalar, in);
    if (specials) {
      ch.check_specials(in, y, s);
    } else {
      ch.check(in, y, s, reference64(*k, in));
    }
  };

  if (is_vector_kind(k->kind)) {
    std::vector<std::size_t> lengths = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 127, 255, 1000, 4097};
    lengths.push_back(1 + rng() % 20000);
    const bool needs_n = k->kind == Kind::Reduce || k->kind == Kind::ArgReduce;
    for (std::size_t n : lengths) {
      if (n == 0 && needs_n && p.op != "sum" && p.op != "norm_l2") continue;  // undefined on empty input
      const std::size_t offset = n % 4;
      run_case(vector_inputs(*k, contract, rng, n, offset), "n=" + std::to_string(n) + " offset=" + std::to_string(offset), false);
      if (HasFatalFailure()) return;
      if (k->kind == Kind::FromHalf || k->kind == Kind::ToHalf) continue;
      // Specials: one or several injected, including at the first and last position (tails).
      if (n == 0) continue;
      Inputs in = vector_inputs(*k, contract, rng, n, offset);
      for (int rep = 0; rep < 3; ++rep) {
        // +-FLT_MAX would make an overflow depend on the summation order: only for non-summing ops.
        const bool sums = k->kind != Kind::ArgReduce && !(p.op == "max" || p.op == "min") &&
                          (k->kind == Kind::Reduce || k->kind == Kind::Reduce2 || k->kind == Kind::Row ||
                           k->kind == Kind::RmsNorm || k->kind == Kind::LayerNorm);
        float sv = kSpecials[rng() % std::size(kSpecials)];
        while (sums && std::fabs(sv) > 1e38f) sv = kSpecials[rng() % std::size(kSpecials)];
        const std::size_t at = rep == 0 ? 0 : rep == 1 ? n - 1 : rng() % n;
        (rep % 2 ? in.a : (in.b.empty() ? in.a : in.b))[at] = sv;
        run_case(in, "n=" + std::to_string(n) + " special " + std::to_string(sv) + " at " + std::to_string(at), true);
        if (HasFatalFailure()) return;
      }
    }
    if (k->kind == Kind::FromHalf) {  // every 16-bit pattern
      Inputs in;
      in.n = 65536;
      for (std::uint32_t v = 0; v < 65536; ++v) in.h.push_back(static_cast<std::uint16_t>(v));
      run_case(in, "all 65536 patterns", false);
      run_case(in, "all 65536 patterns", true);
    }
    if (k->kind == Kind::ToHalf) {  // specials, rounding boundaries, and a walk over all exponents
      Inputs in;
      for (float f : kSpecials) in.a.push_back(f);
      for (float f : {65504.0f, 65519.99f, 65520.0f, 6.1035156e-05f, 6.0975552e-05f, 2.9802322e-08f, 2.9802326e-08f,
                      5.9604645e-08f, 3.3895314e38f, 3.3961775e38f})
        in.a.push_back(f), in.a.push_back(-f);
      for (int e = -150; e < 128; ++e)
        for (int j = 0; j < 8; ++j) {
          std::uint32_t bits = (static_cast<std::uint32_t>(std::clamp(e + 127, 0, 254)) << 23) | static_cast<std::uint32_t>(rng() & 0x7fffff);
          if (j & 1) bits |= 0x1000u | 0x0fffu;  // around half-way for f16 (bit 12) patterns
          float f;
          std::memcpy(&f, &bits, 4);
          in.a.push_back(j & 2 ? -f : f);
        }
      in.n = in.a.size();
      run_case(in, "boundary walk", false);
      run_case(in, "boundary walk", true);
    }
    return;
  }

  if (k->kind == Kind::Dequant) {
    const auto type = parse_quant_type(p.op.substr(8));
    std::normal_distribution<float> g(0.0f, 0.02f);
    for (std::size_t nb : {std::size_t{1}, std::size_t{2}, std::size_t{7}, 1 + below(rng, 40)}) {
      Inputs in;
      in.nb = nb;
      in.n = nb * quant_info(type).block_elems;
      std::vector<float> w(in.n);
      for (auto& v : w) v = g(rng);
      in.wq.resize(quant_row_bytes(type, in.n));
      quantize(type, w, in.wq);
      in.offset = nb % 4;
      run_case(in, "blocks=" + std::to_string(nb) + " offset=" + std::to_string(in.offset), false);
      if (HasFatalFailure()) return;
      // Random bytes: every bit pattern of levels and scales (NaN/inf scales included) must decode alike.
      for (auto& b : in.wq) b = static_cast<std::byte>(rng());
      run_case(in, "random bytes, blocks=" + std::to_string(nb), true);
      if (HasFatalFailure()) return;
    }
    return;
  }
  if (k->kind == Kind::QDotRows) {
    int wt, xt;
    qdot_types("dot_" + p.op.substr(9), &wt, &xt);
    const auto wtype = static_cast<QuantType>(wt), xtype = static_cast<QuantType>(xt);
    std::normal_distribution<float> g(0.0f, 0.02f);
    for (std::size_t m : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{9}, 1 + below(rng, 20)}) {
      Inputs in;
      in.nb = 1 + rng() % 6;
      in.m = m;
      const std::size_t n = in.nb * quant_info(wtype).block_elems, xb = quant_row_bytes(xtype, n);
      std::vector<float> w(n), x(n);
      for (auto& v : w) v = g(rng);
      in.wq.resize(quant_row_bytes(wtype, n));
      quantize(wtype, w, in.wq);
      in.xq.resize(m * xb);
      for (std::size_t i = 0; i < m; ++i) {
        x = draws(rng, n, contract.lo, contract.hi);
        quantize(xtype, x, std::span<std::byte>(in.xq.data() + i * xb, xb));
      }
      in.offset = m % 4;
      run_case(in, "m=" + std::to_string(m) + " blocks=" + std::to_string(in.nb), false);
      if (HasFatalFailure()) return;
    }
    return;
  }
  if (k->kind == Kind::QDotX8) {
    int wt, xt;
    qdot_types("dot_" + p.op.substr(7), &wt, &xt);
    const auto wtype = static_cast<QuantType>(wt), xtype = static_cast<QuantType>(xt);
    std::normal_distribution<float> g(0.0f, 0.02f);
    for (std::size_t nb : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}, std::size_t{8}, 1 + below(rng, 20)}) {
      Inputs in;
      in.nb = nb;
      const std::size_t n = nb * quant_info(wtype).block_elems, row_bytes = quant_row_bytes(wtype, n);
      std::vector<float> w(n);
      in.wq.resize(8 * row_bytes);
      for (std::size_t r = 0; r < 8; ++r) {
        for (auto& v : w) v = g(rng);
        quantize(wtype, w, std::span<std::byte>(in.wq.data() + r * row_bytes, row_bytes));
      }
      in.a = draws(rng, n, contract.lo, contract.hi);
      in.xq.resize(quant_row_bytes(xtype, n));
      quantize(xtype, in.a, in.xq);
      in.offset = nb % 4;
      run_case(in, "blocks=" + std::to_string(nb) + " offset=" + std::to_string(in.offset), false);
      if (HasFatalFailure()) return;
      // Random weight bytes: every level, scale and min pattern (NaN/inf f16 scales included).
      for (auto& b : in.wq) b = static_cast<std::byte>(rng());
      run_case(in, "random weight bytes, blocks=" + std::to_string(nb), false);
      if (HasFatalFailure()) return;
    }
    return;
  }
  if (k->kind == Kind::QDot) {
    int wt, xt;
    qdot_types(p.op, &wt, &xt);
    const auto wtype = static_cast<QuantType>(wt), xtype = static_cast<QuantType>(xt);
    std::vector<std::size_t> blocks = {1, 2, 3, 5, 8, 16, 1 + below(rng, 64)};
    std::normal_distribution<float> g(0.0f, 0.02f);
    for (std::size_t nb : blocks) {
      Inputs in;
      in.nb = nb;
      const std::size_t n = nb * quant_info(wtype).block_elems;
      std::vector<float> w(n);
      for (auto& v : w) v = g(rng);
      in.a = draws(rng, n, contract.lo, contract.hi);  // activations
      in.wq.resize(quant_row_bytes(wtype, n));
      in.xq.resize(quant_row_bytes(xtype, n));
      quantize(wtype, w, in.wq);
      quantize(xtype, in.a, in.xq);
      in.offset = nb % 4;  // byte misalignment of both rows
      run_case(in, "blocks=" + std::to_string(nb) + " offset=" + std::to_string(in.offset), false);
      if (HasFatalFailure()) return;
    }
    return;
  }

  struct Shape {
    std::size_t m, n, k, pad;
  };
  std::vector<Shape> shapes = {{1, 1, 1, 0},    {3, 5, 7, 1},     {13, 17, 19, 0},  {6, 16, 256, 0},
                               {7, 33, 257, 3}, {25, 70, 300, 0}, {100, 1, 50, 2},  {1, 100, 50, 0},
                               {64, 64, 64, 0}, {0, 5, 5, 0},     {5, 0, 5, 0},     {5, 5, 0, 0},
                               {129, 130, 131, 5}};
  shapes.push_back({1 + below(rng, 200), 1 + below(rng, 200), 1 + below(rng, 300), below(rng, 4)});
  for (const auto& s : shapes) {
    const std::size_t cols = k->kind == Kind::Matvec || k->kind == Kind::Transpose ? s.k : s.n;
    const Inputs in = matrix_inputs(rng, s.m, cols, s.k, s.pad, s.m % 3, k->kind);
    run_case(in, "m=" + std::to_string(s.m) + " n=" + std::to_string(cols) + " k=" + std::to_string(s.k) + " pad=" + std::to_string(s.pad), false);
    if (HasFatalFailure()) return;
  }
}

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (const auto& k : cpu::kernel_registry())
    for (Backend b : kAllBackends)
      if (cpu::table_or_null(b) != nullptr) v.push_back({std::string(k.name), b});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Contract, KernelContract, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           std::string backend(name(info.param.backend));  // "wasm-simd": gtest names take no '-'
                           for (char& ch : backend) ch = ch == '-' ? '_' : ch;
                           return info.param.op + "_" + backend;
                         });

TEST(ContractRegistry, EveryKernelHasAContractAndEveryContractAKernel) {
  const auto& all = contracts();
  for (const auto& k : cpu::kernel_registry()) {
    auto it = all.find(std::string(k.name));
    ASSERT_NE(it, all.end()) << "kernel '" << k.name << "' (family " << k.family << ") has no contract in "
                             << contracts_dir() << "/" << k.family << ".yaml";
    EXPECT_EQ(it->second.family, k.family) << "contract for '" << k.name << "' is in the wrong family file";
  }
  for (const auto& [op, c] : all) EXPECT_NE(cpu::find_kernel(op), nullptr) << "contract names op '" << op << "', which does not exist";
}

TEST(ContractRegistry, EveryObligationTypeIsKnown) {
  for (const auto& [op, c] : contracts())
    for (const auto& o : c.obligations) {
      bool known = false;
      for (const char* const* t = kKnownObligationTypes; *t; ++t) known = known || o.type == *t;
      EXPECT_TRUE(known) << op << ": unknown obligation type '" << o.type << "'";
    }
}

TEST(ContractRegistry, EveryBackendIsCheckedAgainstSomething) {
  // SIMD backends need an obligation naming them; the scalar reference needs one against f64 or an
  // independent reference (simd_vs_scalar_exact checks scalar against the test's own reference).
  for (const auto& [op, c] : contracts()) {
    bool simd = false, scalar = false;
    for (const auto& o : c.obligations) {
      simd = true;
      scalar = scalar || o.backends == "all" || o.type == "simd_vs_scalar_exact";
    }
    EXPECT_TRUE(simd && scalar) << op << ": the scalar reference is not checked by any obligation";
  }
}

}  // namespace
}  // namespace trueno::test
