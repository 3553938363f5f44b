// Stand-in for PyTorch's ATen/AccumulateType.h (decy/harvest/README.md): the real one includes c10's Half,
// which needs cuda_fp16.h. im2col.cuh's host code names at::acc_type; its kernels take accT as a template argument.
#pragma once
#include <cstdint>
namespace at {
template <typename T, bool is_cuda> struct AccumulateType { using type = T; };
template <typename T, bool is_cuda> using acc_type = typename AccumulateType<T, is_cuda>::type;
}  // namespace at
