// Launcher for kernels/dequant_f16.cu (convert.h).
#include "trueno/cuda/ops/convert.h"

#include <algorithm>

#include "core/strings.h"

namespace trueno::cuda {

void dequantize_f16(Context& c, QuantType type, api::CUdeviceptr w, std::size_t rows, std::size_t cols, api::CUdeviceptr out,
                    api::CUstream stream, WeightLayout layout) {
  if (stream == nullptr) stream = c.stream();
  if (layout == WeightLayout::Split && !has_split_layout(type))
    throw InvalidArgument(strcat("cuda dequantize_f16: ", quant_info(type).name, " has no split layout (q8_0 has)"));
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
    case QuantType::Q6_K: name = "dequant_q6_k_f16"; break;
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
  if (!has_split_layout(type)) throw InvalidArgument(strcat("cuda split_rows: ", quant_info(type).name, " has no split layout (q8_0 has)"));
  if (cols == 0 || cols % 256 != 0) throw ShapeError(strcat("cuda split_rows: ", cols, " columns are not a positive multiple of ", 256));
  if (src % 16 != 0 || dst % 16 != 0) throw InvalidArgument("cuda split_rows: both matrices must start 16-byte aligned");
  const std::size_t row_bytes = cols / 32 * 34;
  if (src < dst + rows * row_bytes && dst < src + rows * row_bytes) throw InvalidArgument("cuda split_rows: the matrices overlap");
  if (rows * (cols / 32) > 0xFFFFFFFFull) throw ShapeError(strcat("cuda split_rows: ", rows, " x ", cols, " weights are too many blocks"));
  int r = static_cast<int>(rows), nb32 = static_cast<int>(cols / 32);
  void* params[] = {&src, &dst, &r, &nb32};
  launch(c, c.function("dequant_f16", "repack_q8_0_split"), static_cast<unsigned>((rows * (cols / 32) + 255) / 256), 1, 256, 1, params);
}

}  // namespace trueno::cuda
