// Launcher for kernels/dequant_f16.cu (convert.h).
#include "trueno/cuda/ops/convert.h"

#include <algorithm>

#include "core/strings.h"

namespace trueno::cuda {

void dequantize_f16(Context& c, QuantType type, api::CUdeviceptr w, std::size_t rows, std::size_t cols, api::CUdeviceptr out,
                    api::CUstream stream, WeightLayout layout) {
  if (stream == nullptr) stream = c.stream();
  if (layout == WeightLayout::Split && !has_split_layout(type))
    throw InvalidArgument(strcat("cuda dequantize_f16: ", quant_info(type).name, " has no split layout (q8_0 and q6_k have)"));
  const std::size_t block = quant_info(type).block_elems;
  if (cols == 0 || cols % block != 0)
    throw ShapeError(strcat("cuda dequantize_f16: ", cols, " columns are not a positive multiple of ", quant_info(type).name,
                            "'s block of ", block));
  if (rows == 0) return;
  if (rows * cols > 0xFFFFFFFFull)
    throw ShapeError(strcat("cuda dequantize_f16: ", rows, " x ", cols, " weights exceed the kernels' 32-bit element index"));
  if (type == QuantType::F16) {
    check(c.driver().memcpy_dtod_async(out, w, rows * cols * 2, stream), "cuMemcpyDtoDAsync(f16 weights)");
    return;
  }
  const char* name = nullptr;
  switch (type) {
    case QuantType::Q4_K: name = "dequant_q4_k_f16"; break;
    case QuantType::Q5_K: name = "dequant_q5_k_f16"; break;
    case QuantType::Q6_K: name = layout == WeightLayout::Split ? "dequant_q6_ks_f16" : "dequant_q6_k_f16"; break;
    case QuantType::Q8_0: name = layout == WeightLayout::Split ? "dequant_q8_0s_f16" : "dequant_q8_0_f16"; break;
    case QuantType::Q4_0: name = "dequant_q4_0_f16"; break;
    case QuantType::F32: name = "dequant_f32_f16"; break;
    case QuantType::BF16: name = "dequant_bf16_f16"; break;
    default:
      throw InvalidArgument(strcat("cuda dequantize_f16: ", quant_info(type).name, " is not a weight format"));
  }
  api::CUfunction f = c.function("dequant_f16", name);
  int r = static_cast<int>(rows), n = static_cast<int>(cols);
  void* params[] = {&w, &out, &r, &n};
  const std::size_t threads = cols % 8 == 0 ? rows * cols / 8 : rows * cols;
  const auto grid = static_cast<unsigned>(std::min<std::size_t>((threads + 255) / 256, static_cast<std::size_t>(c.info().sms) * 16));
  check(c.driver().launch_kernel(f, grid, 1, 1, 256, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel(dequantize_f16)");
}

void split_rows(Context& c, QuantType type, api::CUdeviceptr src, api::CUdeviceptr dst, std::size_t rows, std::size_t cols) {
  if (!has_split_layout(type))
    throw InvalidArgument(strcat("cuda split_rows: ", quant_info(type).name, " has no split layout (q8_0 and q6_k have)"));
  if (cols == 0 || cols % 256 != 0) throw ShapeError(strcat("cuda split_rows: ", cols, " columns are not a positive multiple of 256"));
  if (src % 16 != 0 || dst % 16 != 0) throw InvalidArgument("cuda split_rows: both matrices must start 16-byte aligned");
  const std::size_t bytes = rows * quant_row_bytes(type, cols);
  if (src < dst + bytes && dst < src + bytes) throw InvalidArgument("cuda split_rows: the matrices overlap");
  const std::size_t per_row = cols / quant_info(type).block_elems, blocks = rows * per_row;  // one thread per block
  if (blocks > 0x7FFFFFFFull) throw ShapeError(strcat("cuda split_rows: ", rows, " x ", cols, " weights are too many blocks"));
  int r = static_cast<int>(rows), nb = static_cast<int>(per_row);
  void* params[] = {&src, &dst, &r, &nb};
  launch(c, c.function("dequant_f16", type == QuantType::Q8_0 ? "repack_q8_0_split" : "repack_q6_k_split"),
         static_cast<unsigned>((blocks + 255) / 256), 1, 256, 1, params);
}

}  // namespace trueno::cuda
