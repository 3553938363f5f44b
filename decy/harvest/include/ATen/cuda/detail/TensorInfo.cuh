// Stand-in for PyTorch's ATen/cuda/detail/TensorInfo.cuh (decy/harvest/README.md): vol2col.cuh includes it;
// its kernels use nothing from it.
#pragma once
