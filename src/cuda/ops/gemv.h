// Decode-time CUDA ops: activation quantization and fused dequantize + GEMV (M = 1), launched
// asynchronously on the context's stream. Weights stay quantized as in the GGUF file.
#pragma once
#include <cstddef>

#include "cuda/context.h"

namespace trueno::cuda {

// n activations quantized to Q8_K on the device (kernels/quantize_q8_k.cu): q[n], d[n/256], bsums[n/16].
struct Q8Activations {
  explicit Q8Activations(std::size_t n);
  std::size_t n;
  DeviceBuffer q, d, bsums;
};

// out = Q8_K(x[out.n]); out.n must be a multiple of 256 (ShapeError otherwise).
void quantize_q8_k(Context& c, api::CUdeviceptr x, Q8Activations& out);

// y[rows] = W x: W is rows x cols Q4_K (cols a multiple of 256), x quantized with quantize_q8_k.
void gemv_q4_k(Context& c, api::CUdeviceptr w, std::size_t rows, std::size_t cols, const Q8Activations& x, api::CUdeviceptr y);

}  // namespace trueno::cuda
