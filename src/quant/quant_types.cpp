// The quantized-type table, row sizes and row views.
#include <algorithm>

#include "core/strings.h"
#include "trueno/error.h"
#include "trueno/quant.h"

namespace trueno {
namespace {

constexpr QuantTypeInfo kInfo[] = {
    {QuantType::F32, "f32", 1, 4},       {QuantType::F16, "f16", 1, 2},       {QuantType::BF16, "bf16", 1, 2},
    {QuantType::Q4_0, "q4_0", 32, 18},   {QuantType::Q8_0, "q8_0", 32, 34},   {QuantType::Q4_K, "q4_k", 256, 144},
    {QuantType::Q5_K, "q5_k", 256, 176}, {QuantType::Q6_K, "q6_k", 256, 210}, {QuantType::Q8_K, "q8_k", 256, 292},
    {QuantType::I32, "i32", 1, 4},
};

std::string supported() {
  std::string s;
  for (const auto& i : kInfo) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

}  // namespace

const QuantTypeInfo& quant_info(QuantType t) {
  for (const auto& i : kInfo)
    if (i.type == t) return i;
  throw InvalidArgument(strcat("quantized type id ", static_cast<std::uint32_t>(t), " is not supported; supported: ",
                               supported()));
}

QuantType quant_type_from_id(std::uint32_t id) { return quant_info(static_cast<QuantType>(id)).type; }

QuantType parse_quant_type(std::string_view name) {
  const std::string lower = to_lower(name);
  for (const auto& i : kInfo)
    if (lower == i.name) return i.type;
  throw InvalidArgument(strcat("unknown quantized type '", name, "'; supported: ", supported()));
}

std::size_t quant_row_bytes(QuantType t, std::size_t n) {
  const QuantTypeInfo& i = quant_info(t);
  if (n % i.block_elems != 0)
    throw ShapeError(strcat(i.name, ": a row of ", n, " elements is not a multiple of the block size ", i.block_elems));
  return n / i.block_elems * i.block_bytes;
}

QuantRow QuantRow::view(QuantType type, std::span<const std::byte> bytes, std::size_t n) {
  const std::size_t need = quant_row_bytes(type, n);
  if (bytes.size() != need)
    throw ShapeError(strcat(quant_info(type).name, ": a row of ", n, " elements takes ", need, " bytes, got ",
                            bytes.size()));
  return {type, bytes, n};
}

}  // namespace trueno
