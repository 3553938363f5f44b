// trueno's transcendental functions, written once over the per-ISA vector API (simd/README.md).
// Include after a vec_<isa>.h; the scalar reference instantiates them at width 1, so every backend
// evaluates the same formulas in the same order (see Note [Transcendental accuracy]).
//
// Note [Transcendental accuracy]
// exp uses Cody-Waite reduction by ln 2 and a degree-6 polynomial on |r| <= ln2/2 (Cephes' expf
// coefficients); the scale 2^n is applied as two exact halves so results that fall into the denormal
// range are rounded once. tanh uses its Taylor series to x^17 below 0.55 (relative truncation error
// < 5e-9) and 1 - 2/(e^{2|x|}+1) above, where the result is >= 0.5 and the subtraction cannot cancel.
// erfc is the Chebyshev fit t*exp(-z^2 + P(t)), t = 1/(1+z/2) (fractional error < 1.2e-7 for z >= 0,
// Numerical Recipes' erfcc). sigmoid, silu and gelu are written through exp(-|u|/2) and erfc so that
// no result is formed as 1 +/- (a value close to -/+1) and no intermediate underflows before the
// final rounding.
//
// Note [No fused steps in element-wise math]
// Every step here is a separately rounded IEEE operation (madd = mul then add), never an FMA, and the
// build has -ffp-contract=off. So each backend performs the same rounded operations in the same order
// as the scalar reference and the element-wise results are bit-identical on every ISA
// (contracts/elementwise.yaml: max_ulp 0). FMA would save ~6 instructions per exp but make results
// depend on the CPU; reductions and GEMM, whose contracts are error bounds, do use FMA.
#pragma once

namespace trueno::cpu::TRUENO_ISA {

inline Vec madd(Vec a, Vec b, Vec c) { return add(mul(a, b), c); }  // never fused: see the Note

inline Vec horner(Vec x, const float* c, int n) {  // c[0] + c[1] x + ... + c[n-1] x^(n-1)
  Vec p = set1(c[n - 1]);
  for (int i = n - 2; i >= 0; --i) p = madd(p, x, set1(c[i]));
  return p;
}

inline Vec vexp(Vec x) {
  const Vec xc = min(max(x, set1(-104.0f)), set1(89.0f));  // beyond: 0 and +inf by rounding
  const Vec n = round_even(mul(xc, set1(1.44269504088896341f)));
  Vec r = madd(n, set1(-0.693359375f), xc);  // ln 2 split in two: hi part exact in 9 bits
  r = madd(n, set1(2.12194440e-4f), r);
  static constexpr float c[] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f,
                                8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
  Vec p = horner(r, c, 6);
  p = madd(p, mul(r, r), add(r, set1(1.0f)));
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
  Vec small = madd(mul(x, x2), horner(x2, c, 8), x);
  small = select(eq(x, zero()), x, small);  // keep the sign of -0
  const Vec e = vexp(mul(ax, set1(2.0f)));
  const Vec t = sub(set1(1.0f), div(set1(2.0f), add(e, set1(1.0f))));
  const Vec large = select(lt(x, zero()), neg(t), t);
  const Vec y = select(lt(ax, set1(0.55f)), small, large);
  return select(is_nan(x), x, y);
}

// x * sigmoid(u) = x / (1 + exp(-u)), evaluated with h = exp(-|u|/2), e = h^2 = exp(-|u|):
//   u >= 0: x / (1 + e)        u < 0: (x h) * (h / (1 + e))
// so nothing overflows and, for u < 0, only the final product can enter the denormal range.
// -inf * sigmoid(-inf) is taken as -0.
inline Vec times_sigmoid(Vec x, Vec u) {
  const Vec h = vexp(mul(abs(u), set1(-0.5f)));
  const Vec one_e = add(set1(1.0f), mul(h, h));
  const Vec pos = div(x, one_e);
  const Vec neg = mul(mul(x, h), div(h, one_e));
  const Vec y = select(lt(u, zero()), neg, pos);
  return select(eq(x, set1(-__builtin_inff())), set1(-0.0f), y);
}

// erfc(z) for any z; relative error ~1.2e-7 (Note [Transcendental accuracy]).
inline Vec verfc(Vec z) {
  const Vec az = abs(z);
  const Vec t = div(set1(1.0f), madd(az, set1(0.5f), set1(1.0f)));
  static constexpr float c[] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f, -0.18628806f,
                                0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};
  const Vec arg = sub(horner(t, c, 10), mul(az, az));
  const Vec r = mul(t, vexp(arg));
  const Vec y = select(lt(z, zero()), sub(set1(2.0f), r), r);
  return select(is_nan(z), z, y);
}

}  // namespace trueno::cpu::TRUENO_ISA
