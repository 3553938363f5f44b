// Reference quantizers for every supported type.
//
// Note [k-quant scale search]
// For each sub-block, (scale, min) or scale is chosen by trying a range of candidate scales around
// range/levels, quantizing with each, refitting the scale (and min) by least squares for the chosen
// integers, and keeping the fit with the smallest squared error. The super-block then stores the
// sub-block parameters as 6-bit (Q4_K/Q5_K) or 8-bit (Q6_K) integers times an f16 super-scale, and the
// elements are re-quantized with exactly the stored parameters, so rounding of the parameters
// cannot push an element outside its nearest representable value.
#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/half.h"
#include "core/strings.h"
#include "quant/blocks.h"
#include "quant/finite.h"
#include "trueno/error.h"
#include "trueno/quant.h"

namespace trueno {
namespace detail {
bool g_force_scalar_quant = false;  // tests: the scalar loops on an SSE2 target (Note [SIMD activation quantization])
}
namespace {

using namespace quant;
using detail::f16_bits_to_f32;
using detail::f32_to_f16_bits;

// Round to nearest, ties to even: the 1.5 * 2^23 trick gives lrintf's result without a libm call
// (4096-element Q8_K: 30 -> ~5 us). Exact for |x| < 2^22, every caller's range for sane scales; x is
// clamped there first (NaN -> -2^22) because a degenerate scale (denormal d, 1/d = inf) gives inf here
// and every caller clamps the result to its level range anyway (found by fuzz/gguf_fuzz.cpp).
int nearest(float x) {
  x = std::fmin(std::fmax(x, -4194304.0f), 4194304.0f);
  const float magic = 12582912.0f;
  return static_cast<int>((x + magic) - magic);
}
int clampi(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// The element with the largest magnitude, sign kept.
float signed_absmax(const float* x, int n) {
  float a = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(a)) a = x[i];
  return a;
}

// f16-stored scale: returns the f16 bits and the value the decoder will use.
std::uint16_t store_scale(float v, float* decoded) {
  const std::uint16_t h = f32_to_f16_bits(v);
  *decoded = f16_bits_to_f32(h);
  return h;
}

template <class Block>
void put(std::byte* out, std::size_t i, const Block& b) {
  std::memcpy(out + i * sizeof(Block), &b, sizeof(Block));
}

// Note [SIMD activation quantization]
// Q8_0 and Q8_K are the activation formats: every matvec quantizes its input (a quarter of a 2-thread
// decode's serial time went there). With SSE2 (every x86-64) four elements per step, performing the
// scalar code's operations on each element: the same products, the same clamp to +-2^22 (maxps returns
// the bound for NaN, as fmax does), the same magic-number rounding, the same int -> int8 conversion
// (Q8_K keeps the low byte as the cast does; Q8_0 clamps to +-127 first); the absmax is the same element
// (the first of largest magnitude). So the bytes are identical to the scalar loops', which remain for
// other targets and are what the tests compare against (QuantTest.SimdQuantizersMatchScalar).
#if defined(__SSE2__)
inline __m128 nearest_ps(__m128 v) {  // nearest() on four lanes, as floats holding integers
  v = _mm_min_ps(_mm_max_ps(v, _mm_set1_ps(-4194304.0f)), _mm_set1_ps(4194304.0f));
  const __m128 magic = _mm_set1_ps(12582912.0f);
  return _mm_sub_ps(_mm_add_ps(v, magic), magic);
}

float absmax_ps(const float* x, int n) {
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  __m128 m = _mm_setzero_ps();
  for (int j = 0; j < n; j += 4) m = _mm_max_ps(m, _mm_and_ps(_mm_loadu_ps(x + j), abs_mask));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

// The low bytes of four int32 vectors, in order (the int -> int8 cast).
__m128i low_bytes(__m128i a, __m128i b, __m128i c, __m128i d) {
  const __m128i ff = _mm_set1_epi32(0xff);
  return _mm_packus_epi16(_mm_packs_epi32(_mm_and_si128(a, ff), _mm_and_si128(b, ff)),
                          _mm_packs_epi32(_mm_and_si128(c, ff), _mm_and_si128(d, ff)));
}
#endif

void quant_q8_0(const float* x, std::byte* out, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, x += 32) {
    BlockQ8_0 b;
#if defined(__SSE2__)
    if (!detail::g_force_scalar_quant) {
      const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
      __m128 m = _mm_setzero_ps();
      for (int j = 0; j < 32; j += 4) m = _mm_max_ps(m, _mm_and_ps(_mm_loadu_ps(x + j), abs_mask));
      m = _mm_max_ps(m, _mm_movehl_ps(m, m));
      const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
      float d;
      b.d = store_scale(amax / 127.0f, &d);
      const __m128 id = _mm_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
      const __m128i lo = _mm_set1_epi16(-127), hi = _mm_set1_epi16(127);
      for (int j = 0; j < 32; j += 16) {
        __m128i q[4];
        for (int k = 0; k < 4; ++k) q[k] = _mm_cvttps_epi32(nearest_ps(_mm_mul_ps(_mm_loadu_ps(x + j + 4 * k), id)));
        // clampi(v, -127, 127): saturating to int16 keeps the order, then the clamp in int16 lanes
        const __m128i w0 = _mm_min_epi16(_mm_max_epi16(_mm_packs_epi32(q[0], q[1]), lo), hi);
        const __m128i w1 = _mm_min_epi16(_mm_max_epi16(_mm_packs_epi32(q[2], q[3]), lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(b.qs + j), _mm_packs_epi16(w0, w1));
      }
      put(out, i, b);
      continue;
    }
#endif
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    float d;
    b.d = store_scale(amax / 127.0f, &d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<std::int8_t>(clampi(nearest(x[j] * id), -127, 127));
    put(out, i, b);
  }
}

void quant_q4_0(const float* x, std::byte* out, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, x += 32) {
    BlockQ4_0 b;
    float d;
    b.d = store_scale(signed_absmax(x, 32) / -8.0f, &d);  // the extreme maps to level 0 exactly
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 16; ++j) {
      const int lo = clampi(nearest(x[j] * id) + 8, 0, 15), hi = clampi(nearest(x[j + 16] * id) + 8, 0, 15);
      b.qs[j] = static_cast<std::uint8_t>(lo | (hi << 4));
    }
    put(out, i, b);
  }
}

// Least-squares fit x ~ s*q - m (m >= 0) over q in [0, levels]; Note [k-quant scale search].
void fit_scale_min(const float* x, int n, int levels, float* s_out, float* m_out) {
  float xmin = *std::min_element(x, x + n), xmax = *std::max_element(x, x + n);
  xmin = std::min(xmin, 0.0f);
  *s_out = 0.0f, *m_out = -xmin;
  if (xmax <= xmin) return;
  double best = INFINITY;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = (static_cast<float>(levels) + 0.1f * static_cast<float>(step)) / (xmax - xmin);
    double sq = 0, sqq = 0, sx = 0, sqx = 0;
    int q[32];
    for (int i = 0; i < n; ++i) {
      q[i] = clampi(nearest(iscale * (x[i] - xmin)), 0, levels);
      sq += q[i], sqq += static_cast<double>(q[i]) * q[i], sx += x[i], sqx += static_cast<double>(q[i]) * x[i];
    }
    const double det = n * sqq - sq * sq;
    if (det <= 0) continue;
    double s = (n * sqx - sq * sx) / det, b = (sqq * sx - sq * sqx) / det;
    if (b > 0) b = 0, s = sqx / sqq;  // the offset can only lower values (x = s q - m, m >= 0)
    double err = 0;
    for (int i = 0; i < n; ++i) err += (s * q[i] + b - x[i]) * (s * q[i] + b - x[i]);
    if (err < best && s > 0) best = err, *s_out = static_cast<float>(s), *m_out = static_cast<float>(-b);
  }
}

void pack_k_scales(const int* sc, const int* m, std::uint8_t* scales) {
  for (int j = 0; j < 4; ++j) {
    scales[j] = static_cast<std::uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    scales[j + 4] = static_cast<std::uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    scales[j + 8] = static_cast<std::uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// One Q4_K (levels 15) or Q5_K (levels 31) super-block: d, dmin, packed scales, and q[256] in [0, levels].
void quant_k45(const float* x, int levels, std::uint16_t* d_bits, std::uint16_t* dmin_bits, std::uint8_t* scales,
               int* q) {
  float s[8], m[8];
  for (int j = 0; j < 8; ++j) fit_scale_min(x + 32 * j, 32, levels, &s[j], &m[j]);
  float d, dmin;
  *d_bits = store_scale(*std::max_element(s, s + 8) / 63.0f, &d);
  *dmin_bits = store_scale(*std::max_element(m, m + 8) / 63.0f, &dmin);
  int sc[8], mq[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = d > 0 ? clampi(nearest(s[j] / d), 0, 63) : 0;
    mq[j] = dmin > 0 ? clampi(nearest(m[j] / dmin), 0, 63) : 0;
  }
  pack_k_scales(sc, mq, scales);
  for (int j = 0; j < 8; ++j) {
    const float step = d * static_cast<float>(sc[j]), off = dmin * static_cast<float>(mq[j]);
    for (int l = 0; l < 32; ++l)
      q[32 * j + l] = step > 0 ? clampi(nearest((x[32 * j + l] + off) / step), 0, levels) : 0;
  }
}

void quant_q4_k(const float* x, std::byte* out, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, x += kQK) {
    BlockQ4_K b;
    int q[kQK];
    quant_k45(x, 15, &b.d, &b.dmin, b.scales, q);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<std::uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
    put(out, i, b);
  }
}

void quant_q5_k(const float* x, std::byte* out, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, x += kQK) {
    BlockQ5_K b;
    int q[kQK];
    quant_k45(x, 31, &b.d, &b.dmin, b.scales, q);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        const int q0 = q[64 * c + l], q1 = q[64 * c + 32 + l];
        b.qs[32 * c + l] = static_cast<std::uint8_t>((q0 & 0xF) | ((q1 & 0xF) << 4));
        b.qh[l] = static_cast<std::uint8_t>(b.qh[l] | ((q0 >> 4) << (2 * c)) | ((q1 >> 4) << (2 * c + 1)));
      }
    put(out, i, b);
  }
}

// Symmetric fit x ~ s*q, q in [-32, 31]; Note [k-quant scale search].
float fit_symmetric(const float* x, int n) {
  const float a = signed_absmax(x, n);
  if (a == 0.0f) return 0.0f;
  float best_s = a / -32.0f;
  double best = INFINITY;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(32.0f + 0.1f * static_cast<float>(step)) / a;
    double sqq = 0, sqx = 0;
    int q[16];
    for (int i = 0; i < n; ++i) {
      q[i] = clampi(nearest(iscale * x[i]), -32, 31);
      sqq += static_cast<double>(q[i]) * q[i], sqx += static_cast<double>(q[i]) * x[i];
    }
    if (sqq <= 0) continue;
    const double s = sqx / sqq;
    double err = 0;
    for (int i = 0; i < n; ++i) err += (s * q[i] - x[i]) * (s * q[i] - x[i]);
    if (err < best) best = err, best_s = static_cast<float>(s);
  }
  return best_s;
}

void quant_q6_k(const float* x, std::byte* out, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, x += kQK) {
    BlockQ6_K b;
    float s[16];
    for (int j = 0; j < 16; ++j) s[j] = fit_symmetric(x + 16 * j, 16);
    float d;
    b.d = store_scale(signed_absmax(s, 16) / -128.0f, &d);
    int q[kQK];
    for (int j = 0; j < 16; ++j) {
      const int sc = d != 0.0f ? clampi(nearest(s[j] / d), -128, 127) : 0;
      b.scales[j] = static_cast<std::int8_t>(sc);
      const float step = d * static_cast<float>(sc);
      for (int l = 0; l < 16; ++l) q[16 * j + l] = (step != 0.0f ? clampi(nearest(x[16 * j + l] / step), -32, 31) : 0) + 32;
    }
    for (int h = 0; h < 2; ++h) {
      const int* qq = q + 128 * h;
      std::uint8_t* ql = b.ql + 64 * h;
      std::uint8_t* qh = b.qh + 32 * h;
      for (int l = 0; l < 32; ++l) {
        const int q1 = qq[l], q2 = qq[l + 32], q3 = qq[l + 64], q4 = qq[l + 96];
        ql[l] = static_cast<std::uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<std::uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<std::uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
    put(out, i, b);
  }
}

void quant_q8_k(const float* x, std::byte* out, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, x += kQK) {
    BlockQ8_K b{};
#if defined(__SSE2__)
    if (!detail::g_force_scalar_quant) {
      const float amax = absmax_ps(x, kQK);
      if (amax != 0.0f) {
        int first = 0;
        while (std::fabs(x[first]) != amax) ++first;
        const float iscale = -127.0f / x[first];
        const __m128 is = _mm_set1_ps(iscale);
        const __m128i c127 = _mm_set1_epi32(127), bias = _mm_set1_epi8(static_cast<char>(0x80));
        for (int j = 0; j < kQK; j += 16) {
          __m128i q[4];
          for (int k = 0; k < 4; ++k) {
            const __m128i v = _mm_cvttps_epi32(nearest_ps(_mm_mul_ps(is, _mm_loadu_ps(x + j + 4 * k))));
            const __m128i gt = _mm_cmpgt_epi32(v, c127);  // std::min(127, v)
            q[k] = _mm_or_si128(_mm_and_si128(gt, c127), _mm_andnot_si128(gt, v));
          }
          const __m128i bytes = low_bytes(q[0], q[1], q[2], q[3]);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(b.qs + j), bytes);
          // sum of 16 signed bytes: unsigned sum of (byte ^ 0x80) minus 16 * 128
          const __m128i s = _mm_sad_epu8(_mm_xor_si128(bytes, bias), _mm_setzero_si128());
          b.bsums[j / 16] = static_cast<std::int16_t>(_mm_cvtsi128_si32(s) + _mm_cvtsi128_si32(_mm_srli_si128(s, 8)) - 2048);
        }
        b.d = 1.0f / iscale;
      }
      put(out, i, b);
      continue;
    }
#endif
    const float a = signed_absmax(x, kQK);
    if (a != 0.0f) {
      const float iscale = -127.0f / a;
      for (int j = 0; j < kQK; ++j) b.qs[j] = static_cast<std::int8_t>(std::min(127, nearest(iscale * x[j])));
      for (int g = 0; g < 16; ++g) {
        int sum = 0;
        for (int j = 0; j < 16; ++j) sum += b.qs[16 * g + j];
        b.bsums[g] = static_cast<std::int16_t>(sum);
      }
      b.d = 1.0f / iscale;
    }
    put(out, i, b);
  }
}

}  // namespace

void quantize(QuantType type, std::span<const float> x, std::span<std::byte> out) {
  const std::size_t need = quant_row_bytes(type, x.size());
  if (out.size() != need)
    throw ShapeError(strcat("quantize: ", x.size(), " elements of ", quant_info(type).name, " take ", need,
                            " bytes, out has ", out.size()));
  const std::size_t nb = x.size() / quant_info(type).block_elems;
  if (quant_info(type).block_elems > 1 && !detail::all_finite(x.data(), x.size()))
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!std::isfinite(x[i]))
        throw InvalidArgument(strcat("quantize to ", quant_info(type).name, ": element ", i, " is ", x[i],
                                     "; block formats can only hold finite values"));
  std::byte* o = out.data();
  switch (type) {
    case QuantType::F32: std::memcpy(o, x.data(), x.size() * 4); break;
    case QuantType::F16:
      for (std::size_t i = 0; i < x.size(); ++i) {
        const std::uint16_t h = f32_to_f16_bits(x[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      break;
    case QuantType::BF16:
      for (std::size_t i = 0; i < x.size(); ++i) {
        const std::uint16_t h = detail::f32_to_bf16_bits(x[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      break;
    case QuantType::Q4_0: quant_q4_0(x.data(), o, nb); break;
    case QuantType::Q8_0: quant_q8_0(x.data(), o, nb); break;
    case QuantType::Q4_K: quant_q4_k(x.data(), o, nb); break;
    case QuantType::Q5_K: quant_q5_k(x.data(), o, nb); break;
    case QuantType::Q6_K: quant_q6_k(x.data(), o, nb); break;
    case QuantType::Q8_K: quant_q8_k(x.data(), o, nb); break;
  }
}

}  // namespace trueno
