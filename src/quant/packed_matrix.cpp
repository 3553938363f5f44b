// PackedQuantMatrix: a quantized matrix's rows repacked 8 at a time for the 8-row decode kernels.
#include <cstdlib>
#include <cstring>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/strings.h"
#include "cpu/dispatch.h"
#include "quant/blocks.h"
#include "quant/pack_x8.h"
#include "trueno/error.h"
#include "trueno/quant.h"

namespace trueno {
namespace quant {

void pack_q4_k_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out) {
  for (std::size_t i = 0; i < nb; ++i) {
    BlockQ4_Kx8 p;
    for (int r = 0; r < 8; ++r) {
      BlockQ4_K b;
      std::memcpy(&b, rows + r * row_bytes + i * sizeof(BlockQ4_K), sizeof(b));
      p.d[r] = b.d, p.dmin[r] = b.dmin;
      for (int j = 0; j < 8; ++j) {
        int sc, m;
        k_scale_min(b.scales, j, &sc, &m);
        p.scales[j][r] = static_cast<std::uint8_t>(sc), p.mins[j][r] = static_cast<std::uint8_t>(m);
      }
      for (int c = 0; c < 4; ++c)
        for (int k = 0; k < 8; ++k) std::memcpy(p.qs[c][k][r], b.qs + 32 * c + 4 * k, 4);
    }
    std::memcpy(out + i * sizeof(p), &p, sizeof(p));
  }
}

void pack_q6_k_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out) {
  for (std::size_t i = 0; i < nb; ++i) {
    BlockQ6_Kx8 p;
    for (int r = 0; r < 8; ++r) {
      BlockQ6_K b;
      std::memcpy(&b, rows + r * row_bytes + i * sizeof(BlockQ6_K), sizeof(b));
      p.d[r] = b.d;
      for (int j = 0; j < 16; ++j) p.scales[j / 2][r][j % 2] = b.scales[j];
      for (int h = 0; h < 2; ++h)
        for (int k = 0; k < 8; ++k) {
          std::memcpy(p.q[h][k][0][r], b.ql + 64 * h + 4 * k, 4);
          std::memcpy(p.q[h][k][1][r], b.ql + 64 * h + 32 + 4 * k, 4);
          std::memcpy(p.q[h][k][2][r], b.qh + 32 * h + 4 * k, 4);
        }
    }
    std::memcpy(out + i * sizeof(p), &p, sizeof(p));
  }
}

void pack_q8_0_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out) {
  for (std::size_t i = 0; i < nb; ++i) {
    BlockQ8_0x8 p;
    for (int r = 0; r < 8; ++r) {
      BlockQ8_0 b;
      std::memcpy(&b, rows + r * row_bytes + i * sizeof(BlockQ8_0), sizeof(b));
      p.d[r] = b.d;
      for (int k = 0; k < 8; ++k) std::memcpy(p.qs[k][r], b.qs + 4 * k, 4);
    }
    std::memcpy(out + i * sizeof(p), &p, sizeof(p));
  }
}

X8Layout x8_layout(QuantType type) {
  switch (type) {
    case QuantType::Q4_K: return {sizeof(BlockQ4_Kx8), pack_q4_k_x8};
    case QuantType::Q6_K: return {sizeof(BlockQ6_Kx8), pack_q6_k_x8};
    case QuantType::Q8_0: return {sizeof(BlockQ8_0x8), pack_q8_0_x8};
    default: throw InvalidArgument(strcat("8 interleaved rows: no layout for ", quant_info(type).name));
  }
}

}  // namespace quant

namespace {

// Note [Packed weights on huge pages]
// Decode streams the packed rows from memory once per token; the mapped file may sit on huge pages of
// the page cache, but an ordinary allocation gets 4 KiB pages where transparent huge pages are only
// given on request (THP "madvise", the Debian default): one TLB miss per 4 KiB of a stream that reads
// hundreds of MiB per token (measured: 1.1B Q4_K_M decode, 1 thread, 18 -> 23-32 tok/s). So the
// buffer starts on a 2 MiB boundary and its whole 2 MiB pages ask for huge pages; the rest (a small
// matrix, the tail) stays on 4 KiB pages, so no memory goes to rounding.
std::byte* alloc_packed(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  void* p = nullptr;
  if (posix_memalign(&p, bytes >= kHuge ? kHuge : 64, bytes == 0 ? 64 : bytes) != 0) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHuge) madvise(p, bytes / kHuge * kHuge, MADV_HUGEPAGE);  // a hint; fine if refused
#endif
  return static_cast<std::byte*>(p);
}

}  // namespace

void PackedQuantMatrix::Free::operator()(std::byte* p) const { std::free(p); }

bool has_fast_x8(QuantType type, std::optional<Backend> backend) {
  const Backend b = cpu::kernels_backend(backend);
  // WebAssembly SIMD128 has the 8-row Q4_K body only (Note [Eight rows in SIMD128]); Q6_K keeps its rows there.
  if (b == Backend::WasmSIMD) return type == QuantType::Q4_K;
  return (type == QuantType::Q4_K || type == QuantType::Q6_K || type == QuantType::Q8_0) && (b == Backend::AVX2 || b == Backend::AVX512);
}

std::optional<PackedQuantMatrix> PackedQuantMatrix::pack(QuantType type, std::span<const std::byte> w, std::size_t rows,
                                                         std::size_t cols, std::optional<Backend> backend) {
  const std::size_t row_bytes = quant_row_bytes(type, cols);
  if (w.size() != rows * row_bytes)
    throw ShapeError(strcat("PackedQuantMatrix::pack: ", rows, " rows of ", cols, " ", quant_info(type).name, " take ",
                            rows * row_bytes, " bytes, the weights have ", w.size()));
  if (!has_fast_x8(type, backend)) return std::nullopt;
  PackedQuantMatrix m;
  m.type_ = type, m.original_ = w, m.rows_ = rows, m.cols_ = cols;
  m.packed_rows_ = rows / 8 * 8;
  const std::size_t nb = cols / quant_info(type).block_elems;
  const quant::X8Layout f = quant::x8_layout(type);
  m.packed_bytes_ = m.packed_rows_ / 8 * nb * f.block_bytes;
  m.packed_.reset(alloc_packed(m.packed_bytes_));
  for (std::size_t g = 0; g < m.packed_rows_ / 8; ++g)
    f.pack(w.data() + 8 * g * row_bytes, row_bytes, nb, m.packed_.get() + g * nb * f.block_bytes);
  return m;
}

}  // namespace trueno
