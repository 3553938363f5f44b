// Prefill products (M > 1) on the tensor cores through cuBLAS: f16 operands, f32 accumulation (never f16
// accumulation), asynchronous on the context's stream.
#pragma once
#include <cstddef>

#include "cuda/context.h"

namespace trueno::cuda {

// y[T][rows] = x[T][cols] w^T (+ beta * y): w[rows][cols] f16 (dequantize_f16 of the file's rows), x
// f16, y f32. beta = 1 adds to y (the residual).
void gemm_f16(Context& c, std::size_t rows, std::size_t T, std::size_t cols, api::CUdeviceptr w_f16, api::CUdeviceptr x_f16,
              api::CUdeviceptr y, float beta = 0.0f);

}  // namespace trueno::cuda
