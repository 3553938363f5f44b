// Stand-in for PyTorch's ATen/cuda/detail/KernelUtils.h (decy/harvest/README.md). Its CUDA_KERNEL_LOOP is
// PyTorch's grid-stride loop,
//   int64_t _i_n_d_e_x = blockIdx.x * blockDim.x + threadIdx.x;
//   for (index_type i = _i_n_d_e_x; _i_n_d_e_x < (n); _i_n_d_e_x += blockDim.x * gridDim.x, i = _i_n_d_e_x)
// with the same steps moved into functions: decy reads operators from tokens, and inside a macro's
// expansion libclang 14 shows only the invocation's (DECY.md, "Third-party kernels").
#pragma once
#include <cstdint>
namespace at { namespace cuda { namespace detail {
__device__ inline int64_t decy_grid_first() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline bool decy_grid_more(int64_t at, int64_t n) { return at < n; }
template <typename T>
__device__ inline void decy_grid_next(int64_t& at, T& i) {
  at += blockDim.x * gridDim.x;
  i = static_cast<T>(at);
}
constexpr int CUDA_NUM_THREADS = 1024;
inline int GET_BLOCKS(const int64_t n, const int64_t max_threads_per_block = CUDA_NUM_THREADS) {
  return static_cast<int>((n - 1) / max_threads_per_block + 1);
}
}}}  // namespace at::cuda::detail
#define CUDA_KERNEL_LOOP_TYPE(i, n, index_type)                  \
  int64_t _i_n_d_e_x = ::at::cuda::detail::decy_grid_first(); \
  for (index_type i = _i_n_d_e_x; ::at::cuda::detail::decy_grid_more(_i_n_d_e_x, (n)); ::at::cuda::detail::decy_grid_next(_i_n_d_e_x, i))
#define CUDA_KERNEL_LOOP(i, n) CUDA_KERNEL_LOOP_TYPE(i, n, int)
