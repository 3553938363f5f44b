// Stand-in for PyTorch's ATen/cuda/CUDAContext.h (decy/harvest/README.md): the real one includes
// cuda_runtime_api.h and cuBLAS. Declares what the harvested headers' host launchers name, and what clang
// needs for their <<<...>>> launches; decy translates only the kernels.
#pragma once
#include <cstddef>
typedef struct CUstream_st* cudaStream_t;
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1);
};
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, std::size_t shared = 0, cudaStream_t stream = 0);
namespace at { namespace cuda {
struct CUDAStream {
  cudaStream_t stream() const;
  operator cudaStream_t() const;
};
CUDAStream getCurrentCUDAStream();
}}  // namespace at::cuda
#define C10_CUDA_KERNEL_LAUNCH_CHECK()
