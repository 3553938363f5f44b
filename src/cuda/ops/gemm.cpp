// cuBLAS GEMM for prefill (gemm.h). Row-major y[T][rows] = x[T][cols] w^T is, in cuBLAS's column-major
// terms, Y (rows x T, ld rows) = W^T (W is cols x rows column-major, ld cols) times X (cols x T, ld cols).
// cublasGemmEx chooses and caches its kernel per shape itself; there is no plan to keep here.
#include "trueno/cuda/ops/gemm.h"

#include <climits>

#include "core/strings.h"

namespace trueno::cuda {

void gemm(Context& c, GemmOperand type, std::size_t rows, std::size_t T, std::size_t cols, api::CUdeviceptr w, api::CUdeviceptr x,
          api::CUdeviceptr y, float beta) {
  if (rows == 0 || T == 0) return;
  if (cols == 0 || rows > INT_MAX || T > INT_MAX || cols > INT_MAX)
    throw ShapeError(strcat("cuda gemm: ", T, " x ", cols, " times ", cols, " x ", rows, " is outside cuBLAS's int sizes"));
  const Cublas* b = cublas();
  const api::cublasHandle h = c.cublas_handle();
  const float alpha = 1.0f;
  const int m = static_cast<int>(rows), n = static_cast<int>(T), k = static_cast<int>(cols);
  const int t = type == GemmOperand::F16 ? api::kCudaR16F : api::kCudaR32F;
  check_cublas(b->gemm_ex(h, api::kCublasOpT, api::kCublasOpN, m, n, k, &alpha, reinterpret_cast<const void*>(w), t, k,
                          reinterpret_cast<const void*>(x), t, k, &beta, reinterpret_cast<void*>(y), api::kCudaR32F, m,
                          api::kCublasCompute32F, api::kCublasGemmDefault),
               type == GemmOperand::F16 ? "cublasGemmEx(f16 x f16 -> f32, f32 accumulation)" : "cublasGemmEx(f32 x f32 -> f32)");
}

}  // namespace trueno::cuda
