// Q4_K x Q8_K prefill on AMX tiles (qgemm_amx.h). Compiled with the AVX-512 flags plus AMX-TILE and
// AMX-INT8; only called after usable() said yes.
//
// Tile step, for one weight block i and sub-block j (32 elements): C[16 w][16 x] (int32) =
// A[16 w][32] (u8 levels, one row per weight row) . B (Q8_K values of 16 activation rows, in the
// 4-byte-interleaved layout tdpbusd reads). Then per weight row: acc += C * scale (exact int32),
// after the 8 sub-blocks: sum += (d dx) float(acc) - (dmin dx) float(sum_j min_j bsum_pair_j).
#include "cpu/kernels/qdot/qgemm_amx.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/cpu_features.h"
#include "core/half.h"
#include "quant/blocks.h"

namespace trueno::cpu::amx {
namespace {

constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;

// Per activation group and block: 8 B tiles (8 rows x 64 bytes; rows 0-3 and 4-7 are also the K=16
// tiles of the two halves, used by Q6_K), 4 bsum-pair vectors (16 lanes of two int16: the sums of
// Q4_K sub-blocks 2t and 2t+1), 16 dx, then 8 vectors of raw bsum pairs (bsums 2t, 2t+1; Q6_K).
constexpr std::size_t kBTile = 512, kPairs = 8 * kBTile, kDx = kPairs + 4 * 64, kRawPairs = kDx + 64;
constexpr std::size_t kGroupBlockBytes = kRawPairs + 8 * 64;

struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

void configure_tiles() {
  thread_local bool done = false;
  if (done) return;
  TileConfig cfg;
  cfg.colsb[0] = 64, cfg.rows[0] = 16;  // C: 16 x 16 int32
  cfg.colsb[1] = 32, cfg.rows[1] = 16;  // A: 16 weight rows x 32 levels
  cfg.colsb[2] = 64, cfg.rows[2] = 8;   // B: 32 values x 16 activation rows, 4-interleaved
  cfg.colsb[3] = 16, cfg.rows[3] = 16;  // Q6_K A: 16 weight rows x 16 levels
  cfg.colsb[4] = 64, cfg.rows[4] = 4;   // Q6_K B: 16 values x 16 activation rows
  _tile_loadconfig(&cfg);
  done = true;
}

// acc[rr] += C[rr][:] * scale[rr] for the 16 weight rows of one tile multiply (C stored in cbuf).
inline void add_scaled(__m512i acc[16], const std::int32_t* cbuf, const std::int32_t* scale) {
  for (int rr = 0; rr < 16; ++rr)
    acc[rr] = _mm512_add_epi32(acc[rr], _mm512_mullo_epi32(_mm512_load_si512(cbuf + 16 * rr), _mm512_set1_epi32(scale[rr])));
}

// y[(16 g + n) * ldy + r0 + rr] = sum[rr][n] for the real weight rows (rr < nr) and activation rows (< m).
inline void store_group(const __m512 sum[16], std::size_t g, std::size_t m, std::size_t r0, std::size_t nr, float* y,
                        std::size_t ldy) {
  alignas(64) float out[16];
  for (std::size_t rr = 0; rr < nr; ++rr) {
    _mm512_store_ps(out, sum[rr]);
    for (std::size_t n = 0; n < 16 && 16 * g + n < m; ++n) y[(16 * g + n) * ldy + r0 + rr] = out[n];
  }
}

}  // namespace

bool usable() {
  static const bool ok = [] {
    const char* env = std::getenv("TRUENO_AMX");
    if (env != nullptr && std::string_view(env) == "0") return false;
    if (!detail::cpu_features().amx_int8 || !detail::cpu_features().avx512bw) return false;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
}

std::size_t packed_activation_bytes(std::size_t m, std::size_t nb) { return (m + 15) / 16 * nb * kGroupBlockBytes; }
std::size_t weight_scratch_bytes(std::size_t nb) { return nb * (4096 + 16 * 16 * 4 + 16 * 8 * 4 + 2 * 16 * 4) + 8192; }

void pack_activation_group(const void* xq, std::size_t xq_row_bytes, std::size_t m, std::size_t nb, std::size_t g, void* pack) {
  auto* out = static_cast<unsigned char*>(pack) + g * nb * kGroupBlockBytes;
  for (std::size_t i = 0; i < nb; ++i, out += kGroupBlockBytes) {
    for (std::size_t n = 0; n < 16; ++n) {
      const std::size_t row = std::min(16 * g + n, m - 1);
      const auto* bx = static_cast<const unsigned char*>(xq) + row * xq_row_bytes + i * sizeof(quant::BlockQ8_K);
      quant::BlockQ8_K b;
      std::memcpy(&b, bx, sizeof b);
      for (int j = 0; j < 8; ++j)
        for (int k = 0; k < 8; ++k)  // B_j[k][4n + t] = x[n][32j + 4k + t]
          std::memcpy(out + j * kBTile + k * 64 + 4 * n, b.qs + 32 * j + 4 * k, 4);
      for (int t = 0; t < 4; ++t) {
        const std::int16_t lo = static_cast<std::int16_t>(b.bsums[4 * t] + b.bsums[4 * t + 1]);
        const std::int16_t hi = static_cast<std::int16_t>(b.bsums[4 * t + 2] + b.bsums[4 * t + 3]);
        std::memcpy(out + kPairs + t * 64 + 4 * n, &lo, 2);
        std::memcpy(out + kPairs + t * 64 + 4 * n + 2, &hi, 2);
      }
      std::memcpy(out + kDx + 4 * n, &b.d, 4);
      for (int t = 0; t < 8; ++t) std::memcpy(out + kRawPairs + t * 64 + 4 * n, b.bsums + 2 * t, 4);
    }
  }
}

void q4k_rows(const void* w, std::size_t row_bytes, std::size_t r0, std::size_t nr, const void* pack, std::size_t m,
              std::size_t nb, float* y, std::size_t ldy, void* scratch) {
  configure_tiles();
  // Unpack the 16 weight rows once: A tiles [i][j] (16 x 32 levels), scales, min pairs, d, dmin.
  auto* a_tiles = static_cast<unsigned char*>(scratch);
  auto* sc = reinterpret_cast<std::int32_t*>(a_tiles + nb * 8 * 512);          // [i][j][16]
  auto* minpair = sc + nb * 8 * 16;                                           // [i][16][4]
  auto* dw = reinterpret_cast<float*>(minpair + nb * 16 * 4);                 // [i][16]
  auto* dminw = dw + nb * 16;                                                 // [i][16]
  auto* cbuf = reinterpret_cast<std::int32_t*>(dminw + nb * 16);              // 16 x 16, 64-aligned below
  cbuf = reinterpret_cast<std::int32_t*>((reinterpret_cast<std::uintptr_t>(cbuf) + 63) & ~std::uintptr_t{63});
  for (std::size_t rr = 0; rr < 16; ++rr) {
    const std::size_t r = r0 + std::min(rr, nr - 1);  // rows past nr repeat the last (not stored)
    const auto* wr = static_cast<const unsigned char*>(w) + r * row_bytes;
    for (std::size_t i = 0; i < nb; ++i) {
      quant::BlockQ4_K b;
      std::memcpy(&b, wr + i * sizeof b, sizeof b);
      int s[8], mn[8];
      for (int j = 0; j < 8; ++j) quant::k_scale_min(b.scales, j, &s[j], &mn[j]);
      const __m256i low4 = _mm256_set1_epi8(0x0F);
      for (int c = 0; c < 4; ++c) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(a_tiles + (i * 8 + 2 * c) * 512 + rr * 32), _mm256_and_si256(q, low4));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(a_tiles + (i * 8 + 2 * c + 1) * 512 + rr * 32),
                            _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
      }
      for (int j = 0; j < 8; ++j) sc[(i * 8 + j) * 16 + rr] = s[j];
      for (int t = 0; t < 4; ++t)
        minpair[(i * 16 + rr) * 4 + t] = static_cast<std::int32_t>(static_cast<std::uint32_t>(mn[2 * t]) | (static_cast<std::uint32_t>(mn[2 * t + 1]) << 16));
      dw[i * 16 + rr] = detail::f16_bits_to_f32(b.d);
      dminw[i * 16 + rr] = detail::f16_bits_to_f32(b.dmin);
    }
  }
  const auto* packed = static_cast<const unsigned char*>(pack);
  for (std::size_t g = 0; g * 16 < m; ++g) {
    __m512 sum[16];
    for (auto& v : sum) v = _mm512_setzero_ps();
    for (std::size_t i = 0; i < nb; ++i) {
      const unsigned char* gb = packed + (g * nb + i) * kGroupBlockBytes;
      __m512i acc[16];
      for (auto& v : acc) v = _mm512_setzero_si512();
      for (int j = 0; j < 8; ++j) {
        _tile_zero(0);
        _tile_loadd(1, a_tiles + (i * 8 + j) * 512, 32);
        _tile_loadd(2, gb + j * kBTile, 64);
        _tile_dpbusd(0, 1, 2);
        _tile_stored(0, cbuf, 64);
        add_scaled(acc, cbuf, sc + (i * 8 + j) * 16);
      }
      const __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float*>(gb + kDx));
      __m512i bp[4];
      for (int t = 0; t < 4; ++t) bp[t] = _mm512_loadu_si512(gb + kPairs + t * 64);
      for (int rr = 0; rr < 16; ++rr) {
        __m512i summ = _mm512_setzero_si512();
        for (int t = 0; t < 4; ++t) summ = _mm512_add_epi32(summ, _mm512_madd_epi16(bp[t], _mm512_set1_epi32(minpair[(i * 16 + rr) * 4 + t])));
        const __m512 d = _mm512_mul_ps(_mm512_set1_ps(dw[i * 16 + rr]), dx);
        const __m512 dmin = _mm512_mul_ps(_mm512_set1_ps(dminw[i * 16 + rr]), dx);
        const __m512 term = _mm512_sub_ps(_mm512_mul_ps(d, _mm512_cvtepi32_ps(acc[rr])), _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(summ)));
        sum[rr] = _mm512_add_ps(sum[rr], term);
      }
    }
    store_group(sum, g, m, r0, nr, y, ldy);
  }
}

void q6k_rows(const void* w, std::size_t row_bytes, std::size_t r0, std::size_t nr, const void* pack, std::size_t m,
              std::size_t nb, float* y, std::size_t ldy, void* scratch) {
  configure_tiles();
  // A tiles [i][sb] (16 rows x 16 levels 0..63), scales [i][sb][16], scale pairs [i][16][8], d [i][16].
  auto* a_tiles = static_cast<unsigned char*>(scratch);
  auto* sc = reinterpret_cast<std::int32_t*>(a_tiles + nb * 16 * 256);
  auto* scpair = sc + nb * 16 * 16;
  auto* dw = reinterpret_cast<float*>(scpair + nb * 16 * 8);
  auto* cbuf = reinterpret_cast<std::int32_t*>((reinterpret_cast<std::uintptr_t>(dw + nb * 16) + 63) & ~std::uintptr_t{63});
  const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3);
  for (std::size_t rr = 0; rr < 16; ++rr) {
    const std::size_t r = r0 + std::min(rr, nr - 1);
    const auto* wr = static_cast<const unsigned char*>(w) + r * row_bytes;
    for (std::size_t i = 0; i < nb; ++i) {
      const auto* bw = wr + i * sizeof(quant::BlockQ6_K);
      const auto* ql = bw + offsetof(quant::BlockQ6_K, ql);
      const auto* qhp = bw + offsetof(quant::BlockQ6_K, qh);
      for (int h = 0; h < 2; ++h) {
        const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * h));
        const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp + 32 * h));
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, three), 4)),
            _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), three), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), three), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), three), 4))};
        for (int k = 0; k < 4; ++k) {  // elements 128h + 32k + [0, 32): sub-blocks 8h + 2k, 8h + 2k + 1
          const std::size_t sb = 8 * h + 2 * k;
          _mm_storeu_si128(reinterpret_cast<__m128i*>(a_tiles + (i * 16 + sb) * 256 + rr * 16), _mm256_castsi256_si128(q[k]));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(a_tiles + (i * 16 + sb + 1) * 256 + rr * 16), _mm256_extracti128_si256(q[k], 1));
        }
      }
      std::int8_t s8[16];
      std::memcpy(s8, bw + offsetof(quant::BlockQ6_K, scales), 16);
      for (int sb = 0; sb < 16; ++sb) sc[(i * 16 + sb) * 16 + rr] = s8[sb];
      for (int t = 0; t < 8; ++t)
        scpair[(i * 16 + rr) * 8 + t] = static_cast<std::int32_t>(static_cast<std::uint16_t>(s8[2 * t]) |
                                                                  (static_cast<std::uint32_t>(static_cast<std::uint16_t>(s8[2 * t + 1])) << 16));
      std::uint16_t d16;
      std::memcpy(&d16, bw + offsetof(quant::BlockQ6_K, d), 2);
      dw[i * 16 + rr] = detail::f16_bits_to_f32(d16);
    }
  }
  const auto* packed = static_cast<const unsigned char*>(pack);
  for (std::size_t g = 0; g * 16 < m; ++g) {
    __m512 sum[16];
    for (auto& v : sum) v = _mm512_setzero_ps();
    for (std::size_t i = 0; i < nb; ++i) {
      const unsigned char* gb = packed + (g * nb + i) * kGroupBlockBytes;
      __m512i acc[16];
      for (auto& v : acc) v = _mm512_setzero_si512();
      for (int sb = 0; sb < 16; ++sb) {
        _tile_zero(0);
        _tile_loadd(3, a_tiles + (i * 16 + sb) * 256, 16);
        _tile_loadd(4, gb + (sb / 2) * kBTile + (sb % 2) * 256, 64);
        _tile_dpbusd(0, 3, 4);
        _tile_stored(0, cbuf, 64);
        add_scaled(acc, cbuf, sc + (i * 16 + sb) * 16);
      }
      const __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float*>(gb + kDx));
      __m512i bp[8];
      for (int t = 0; t < 8; ++t) bp[t] = _mm512_loadu_si512(gb + kRawPairs + t * 64);
      for (int rr = 0; rr < 16; ++rr) {
        __m512i off = _mm512_setzero_si512();  // levels are stored +32: subtract 32 sum_sb sc_sb bsum_sb
        for (int t = 0; t < 8; ++t) off = _mm512_add_epi32(off, _mm512_madd_epi16(bp[t], _mm512_set1_epi32(scpair[(i * 16 + rr) * 8 + t])));
        const __m512i sumi = _mm512_sub_epi32(acc[rr], _mm512_slli_epi32(off, 5));
        const __m512 d = _mm512_mul_ps(_mm512_set1_ps(dw[i * 16 + rr]), dx);
        sum[rr] = _mm512_add_ps(sum[rr], _mm512_mul_ps(d, _mm512_cvtepi32_ps(sumi)));
      }
    }
    store_group(sum, g, m, r0, nr, y, ldy);
  }
}

}  // namespace trueno::cpu::amx
