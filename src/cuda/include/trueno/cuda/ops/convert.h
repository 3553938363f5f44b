// Weight conversion on the device (kernels/dequant_f16.cu): quantized or float rows -> f16 rows, the
// input of the cuBLAS prefill GEMMs.
#pragma once
#include <cstddef>

#include "trueno/cuda/context.h"
#include "trueno/cuda/ops/gemv.h"
#include "trueno/quant.h"

namespace trueno::cuda {

// out[rows][cols] (f16) = the f16 of every weight of w (rows of `type` in `layout`, gemv.h), exactly the
// f16 of the CPU decoder's f32 value. Asynchronous on `stream` (null: the context's stream).
void dequantize_f16(Context& c, QuantType type, api::CUdeviceptr w, std::size_t rows, std::size_t cols, api::CUdeviceptr out,
                    api::CUstream stream = nullptr, WeightLayout layout = WeightLayout::File);

// dst = src (rows x cols of `type`, the file's layout) split (gemv.h's WeightLayout); dst must not overlap src and
// both must be 16-byte aligned. Asynchronous on the context's stream
// (kernels/dequant_f16.cu).
void split_rows(Context& c, QuantType type, api::CUdeviceptr src, api::CUdeviceptr dst, std::size_t rows, std::size_t cols);

}  // namespace trueno::cuda
