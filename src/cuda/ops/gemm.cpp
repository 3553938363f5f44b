// cuBLAS GEMM for prefill (gemm.h). Row-major y[T][rows] = x[T][cols] w^T is, in cuBLAS's column-major
// terms, Y (rows x T, ld rows) = W^T (W is cols x rows column-major, ld cols) times X (cols x T, ld cols).
#include "cuda/ops/gemm.h"

#include <climits>

#include "core/strings.h"

namespace trueno::cuda {

void gemm_f16(Context& c, std::size_t rows, std::size_t T, std::size_t cols, api::CUdeviceptr w_f16, api::CUdeviceptr x_f16,
              api::CUdeviceptr y, float beta) {
  if (rows == 0 || T == 0) return;
  if (cols == 0 || rows > INT_MAX || T > INT_MAX || cols > INT_MAX)
    throw ShapeError(strcat("cuda gemm_f16: ", T, " x ", cols, " times ", cols, " x ", rows, " is outside cuBLAS's int sizes"));
  const Cublas* b = cublas();
  const api::cublasHandle h = c.cublas_handle();
  const float alpha = 1.0f;
  const int m = static_cast<int>(rows), n = static_cast<int>(T), k = static_cast<int>(cols);
  check_cublas(b->gemm_ex(h, api::kCublasOpT, api::kCublasOpN, m, n, k, &alpha, reinterpret_cast<const void*>(w_f16), api::kCudaR16F, k,
                          reinterpret_cast<const void*>(x_f16), api::kCudaR16F, k, &beta, reinterpret_cast<void*>(y), api::kCudaR32F, m,
                          api::kCublasCompute32F, api::kCublasGemmDefault),
               "cublasGemmEx(f16 x f16 -> f32, f32 accumulation)");
}

}  // namespace trueno::cuda
