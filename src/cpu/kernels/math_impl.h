// trueno's transcendental functions, written once over the per-ISA vector API (simd/README.md).
// Include after a vec_<isa>.h; the scalar reference instantiates them at width 1, so every backend
// evaluates the same formulas in the same order (see Note [Transcendental accuracy]).
//
// Note [Transcendental accuracy]
// exp uses Cody-Waite reduction by ln 2 and a degree-6 polynomial on |r| <= ln2/2 (Cephes' expf
// coefficients); the scale 2^n is applied as two exact halves so results that fall into the denormal
// range are rounded once, correctly. tanh uses its Taylor series to x^17 below 0.55 (relative
// truncation error < 5e-9) and 1 - 2/(e^{2|x|}+1) above, where the result is >= 0.5 and the
// subtraction cannot cancel. erfc is the Chebyshev fit t*exp(-z^2 + P(t)), t = 1/(1+z/2) (fractional
// error < 1.2e-7 for z >= 0, Numerical Recipes' erfcc). sigmoid, silu and gelu are written through
// exp(-u) and erfc so that no result is formed as 1 +/- (a value close to -/+1). Backends with FMA
// fuse the polynomial steps; the contracts bound the difference (<= 2 ULP, contracts/elementwise.yaml).
#pragma once

namespace trueno::cpu::TRUENO_ISA {

inline Vec horner(Vec x, const float* c, int n) {  // c[0] + c[1] x + ... + c[n-1] x^(n-1)
  Vec p = set1(c[n - 1]);
  for (int i = n - 2; i >= 0; --i) p = fmadd(p, x, set1(c[i]));
  return p;
}

inline Vec vexp(Vec x) {
  const Vec xc = min(max(x, set1(-104.0f)), set1(89.0f));  // beyond: 0 and +inf by rounding
  const Vec n = round_even(mul(xc, set1(1.44269504088896341f)));
  Vec r = fmadd(n, set1(-0.693359375f), xc);  // ln 2 split in two: hi part exact in 9 bits
  r = fmadd(n, set1(2.12194440e-4f), r);
  static constexpr float c[] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f,
                                8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
  Vec p = horner(r, c, 6);
  p = fmadd(p, mul(r, r), add(r, set1(1.0f)));
  const Vec n1 = round_even(mul(n, set1(0.5f)));
  const Vec n2 = sub(n, n1);
  const Vec y = mul(mul(p, pow2i(n1)), pow2i(n2));
  return select(is_nan(x), x, y);
}

inline Vec vtanh(Vec x) {
  const Vec ax = abs(x);
  const Vec x2 = mul(x, x);
  static constexpr float c[] = {-3.33333333333e-1f, 1.33333333333e-1f,  -5.39682539683e-2f,
                                2.18694885362e-2f,  -8.86323552990e-3f, 3.59212803657e-3f,
                                -1.45583438705e-3f, 5.90027440946e-4f};
  const Vec small = fmadd(mul(x, x2), horner(x2, c, 8), x);
  const Vec e = vexp(mul(ax, set1(2.0f)));
  const Vec t = sub(set1(1.0f), div(set1(2.0f), add(e, set1(1.0f))));
  const Vec large = select(lt(x, zero()), neg(t), t);
  const Vec y = select(lt(ax, set1(0.55f)), small, large);
  return select(is_nan(x), x, y);
}

// x / (1 + exp(-u)): x * sigmoid(u) without cancellation; -inf * sigmoid(-inf) is taken as -0.
inline Vec times_sigmoid(Vec x, Vec u) {
  const Vec y = div(x, add(set1(1.0f), vexp(neg(u))));
  return select(eq(x, set1(-__builtin_inff())), set1(-0.0f), y);
}

// erfc(z) for any z; relative error ~1.2e-7 (Note [Transcendental accuracy]).
inline Vec verfc(Vec z) {
  const Vec az = abs(z);
  const Vec t = div(set1(1.0f), fmadd(az, set1(0.5f), set1(1.0f)));
  static constexpr float c[] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f, -0.18628806f,
                                0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};
  const Vec arg = sub(horner(t, c, 10), mul(az, az));
  const Vec r = mul(t, vexp(arg));
  const Vec y = select(lt(z, zero()), sub(set1(2.0f), r), r);
  return select(is_nan(z), z, y);
}

}  // namespace trueno::cpu::TRUENO_ISA
