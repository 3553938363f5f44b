// Stand-in for PyTorch's ATen/cuda/detail/IndexUtils.cuh (decy/harvest/README.md): the real one reaches
// c10's complex and thrust. vol2col.cuh's host code uses std::min, std::numeric_limits and TORCH_CHECK
// through it; its kernels use nothing from it.
#pragma once
#include <algorithm>
#include <limits>
#define TORCH_CHECK(...)
