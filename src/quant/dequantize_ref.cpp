// trueno::dequantize (through the dispatch table: every backend has the decoders) and
// trueno::dequantize_exact (the same decoders in double).
#include <cstring>

#include "cpu/simd/vec_scalar.h"
#include "core/strings.h"
#include "cpu/dispatch.h"
#include "cpu/kernels/qdequant/qdequant_impl.h"
#include "trueno/error.h"
#include "trueno/quant.h"

namespace trueno {
namespace {

namespace ref = cpu::scalar;

template <class T>
void plain_types(const QuantRow& row, T* out) {
  const std::byte* p = row.bytes.data();
  for (std::size_t i = 0; i < row.n; ++i) {
    if (row.type == QuantType::F32) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      out[i] = f;
    } else {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = row.type == QuantType::F16 ? detail::f16_bits_to_f32(h) : detail::bf16_bits_to_f32(h);
    }
  }
}

void check(const QuantRow& row, std::size_t out_size) {
  if (out_size != row.n) throw ShapeError(strcat("dequantize: the row has ", row.n, " elements, out has ", out_size));
}

}  // namespace

void dequantize(const QuantRow& row, std::span<float> out, std::optional<Backend> backend) {
  check(row, out.size());
  const std::size_t nb = row.n / quant_info(row.type).block_elems;
  const void* p = row.bytes.data();
  if (quant_info(row.type).block_elems == 1) return plain_types(row, out.data());
  const cpu::KernelTable& t = cpu::kernels(backend, "dequantize");
  switch (row.type) {
    case QuantType::Q4_0: t.dequant_q4_0(p, out.data(), nb); break;
    case QuantType::Q8_0: t.dequant_q8_0(p, out.data(), nb); break;
    case QuantType::Q4_K: t.dequant_q4_k(p, out.data(), nb); break;
    case QuantType::Q5_K: t.dequant_q5_k(p, out.data(), nb); break;
    case QuantType::Q6_K: t.dequant_q6_k(p, out.data(), nb); break;
    case QuantType::Q8_K: t.dequant_q8_k(p, out.data(), nb); break;
    default: break;
  }
}

void dequantize_exact(const QuantRow& row, std::span<double> out) {
  check(row, out.size());
  const std::size_t nb = row.n / quant_info(row.type).block_elems;
  const auto* p = reinterpret_cast<const unsigned char*>(row.bytes.data());
  switch (row.type) {
    case QuantType::F32: case QuantType::F16: case QuantType::BF16: plain_types(row, out.data()); break;
    case QuantType::Q4_0: ref::dequant_q4_0(p, out.data(), nb); break;
    case QuantType::Q8_0: ref::dequant_q8_0(p, out.data(), nb); break;
    case QuantType::Q4_K: ref::dequant_q4_k(p, out.data(), nb); break;
    case QuantType::Q5_K: ref::dequant_q5_k(p, out.data(), nb); break;
    case QuantType::Q6_K: ref::dequant_q6_k(p, out.data(), nb); break;
    case QuantType::Q8_K: ref::dequant_q8_k(p, out.data(), nb); break;
  }
}

}  // namespace trueno
