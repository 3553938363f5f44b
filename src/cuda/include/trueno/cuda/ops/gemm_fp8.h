// FP8 E4M3 prefill products through cuBLASLt (--prefill-precision fp8): per-tensor scales, f32
// accumulation (cuBLASLt's fast FP8 accumulation off), f32 output. Asynchronous on the context's stream.
#pragma once
#include <cstddef>

#include "trueno/cuda/context.h"

namespace trueno::cuda {

// n E4M3 values and their tensor's scale: value i is data[i] * scale.
struct Fp8Tensor {
  Fp8Tensor() = default;
  Fp8Tensor(Context& c, std::size_t n);
  std::size_t n = 0;
  DeviceBuffer data;
  // Bytes [0, 4): the scale (f32), at the allocation's start: cuBLASLt's kernels take scale pointers with
  // the alignment of the one the plan was made with (a 4-byte-aligned one was refused). [16, 20): amax bits.
  DeviceBuffer amax_scale;
  api::CUdeviceptr scale() const { return amax_scale.ptr(); }
  api::CUdeviceptr amax_bits() const { return amax_scale.ptr() + 16; }
};

// out = E4M3 of x[count] with scale = amax(|x|) / 448 (kernels/fp8_ops.cu); count <= out.n.
void quantize_fp8_f32(Context& c, api::CUdeviceptr x, std::size_t count, Fp8Tensor& out);
void quantize_fp8_f16(Context& c, api::CUdeviceptr x_f16, std::size_t count, Fp8Tensor& out);

// A prompt pass's rmsnorm (ops/layer.h: out[rows][n], the same bits) and swiglu (g[n] = silu(g) * u) that
// also leave the amax of what they wrote in amax_of, so that cast_fp8_f32 needs no amax pass of its own.
void rmsnorm_amax(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr out, std::size_t rows, std::size_t n,
                  Fp8Tensor& amax_of);
void swiglu_amax(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, std::size_t n, Fp8Tensor& amax_of);
// out = E4M3 of x[count] with the amax already in out (rmsnorm_amax, swiglu_amax); count <= out.n.
void cast_fp8_f32(Context& c, api::CUdeviceptr x, std::size_t count, Fp8Tensor& out);

// y[T][rows] = x[T][cols] w^T (+ beta * y) for the scaled E4M3 tensors w [rows][cols] and x [T][cols].
// The cuBLASLt plan (descriptors and the heuristic's algorithm) is cached per (rows, T, cols). Throws
// CudaError naming the shape when cuBLASLt has no FP8 kernel for it (e.g. widths not a multiple of 16).
void gemm_fp8(Context& c, std::size_t rows, std::size_t T, std::size_t cols, const Fp8Tensor& w, const Fp8Tensor& x, api::CUdeviceptr y,
              float beta = 0.0f);

}  // namespace trueno::cuda
