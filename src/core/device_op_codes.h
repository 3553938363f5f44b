// The op codes that CUDA's kernels (src/cuda/kernels/tensor_ops.cu) and Vulkan's shaders
// (src/vulkan/shaders/elementwise.comp, reduce.comp) switch on: one table for both backends.
#pragma once
#include "trueno/device_ops.h"

namespace trueno::detail {

// The op codes of CUDA's tensor_elementwise and Vulkan's elementwise.comp.
inline int elementwise_code(DeviceOp op) {
  switch (op) {
    case DeviceOp::Add: return 0;
    case DeviceOp::Sub: return 1;
    case DeviceOp::Mul: return 2;
    case DeviceOp::Div: return 3;
    case DeviceOp::Swiglu: return 4;
    case DeviceOp::Scale: return 5;
    case DeviceOp::Abs: return 6;
    case DeviceOp::Relu: return 7;
    case DeviceOp::Exp: return 8;
    case DeviceOp::Sigmoid: return 9;
    case DeviceOp::Tanh: return 10;
    case DeviceOp::GeluTanh: return 11;
    case DeviceOp::GeluErf: return 12;
    case DeviceOp::Silu: return 13;
    case DeviceOp::SiluBackward: return 14;
    case DeviceOp::GeluTanhBackward: return 15;
    case DeviceOp::TanhBackward: return 16;
    case DeviceOp::SigmoidBackward: return 17;
    default: return -1;
  }
}

// The op codes of CUDA's tensor_reduce and Vulkan's reduce.comp.
inline int reduce_code(DeviceOp op) {
  switch (op) {
    case DeviceOp::Sum: return 0;
    case DeviceOp::Max: return 1;
    case DeviceOp::Dot: return 2;
    case DeviceOp::Min: return 3;
    default: return 4;  // Mean
  }
}

}  // namespace trueno::detail
