// Prefill products (M > 1) through cuBLAS: f16 operands on the tensor cores (or f32 operands for F32
// weights), always f32 accumulation (never f16 accumulation), asynchronous on the context's stream.
#pragma once
#include <cstddef>

#include "trueno/cuda/context.h"

namespace trueno::cuda {

enum class GemmOperand { F16, F32 };

// y[T][rows] = x[T][cols] w^T (+ beta * y): w[rows][cols] and x of the operand type (F16: dequantize_f16
// of the file's rows; F32: the file's rows as they are), y f32. beta = 1 adds to y (the residual).
void gemm(Context& c, GemmOperand type, std::size_t rows, std::size_t T, std::size_t cols, api::CUdeviceptr w, api::CUdeviceptr x,
          api::CUdeviceptr y, float beta = 0.0f);

inline void gemm_f16(Context& c, std::size_t rows, std::size_t T, std::size_t cols, api::CUdeviceptr w_f16, api::CUdeviceptr x_f16,
                     api::CUdeviceptr y, float beta = 0.0f) {
  gemm(c, GemmOperand::F16, rows, T, cols, w_f16, x_f16, y, beta);
}

}  // namespace trueno::cuda
