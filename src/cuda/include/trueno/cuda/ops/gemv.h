// Decode-time CUDA ops: activation quantization and fused dequantize + GEMV (M = 1), launched
// asynchronously on the context's stream. Weights stay quantized as in the GGUF file.
#pragma once
#include <cstddef>
#include <span>

#include "trueno/cuda/context.h"
#include "trueno/quant.h"

namespace trueno::cuda {

// n activations quantized to Q8_K on the device (kernels/quantize_q8_k.cu): q[n], d[n/256], bsums[n/16].
struct Q8Activations {
  Q8Activations(Context& c, std::size_t n);
  std::size_t n;
  DeviceBuffer q, d, bsums;
};

// out = Q8_K(x[out.n]); out.n must be a multiple of 256 (ShapeError otherwise).
void quantize_q8_k(Context& c, api::CUdeviceptr x, Q8Activations& out);

// y[rows] = W x: W is rows x cols Q4_K (cols a multiple of 256), x quantized with quantize_q8_k.
void gemv_q4_k(Context& c, api::CUdeviceptr w, std::size_t rows, std::size_t cols, const Q8Activations& x, api::CUdeviceptr y);

// Whether gemv() takes Q8_K activations for this weight type (else the f32 vector).
bool gemv_takes_q8(QuantType type);
// True when gemv() supports the weight type (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, F16, BF16, F32); the others are
// named in its error.
bool gemv_supports(QuantType type);

// Where a matrix's bytes lie on the device: as in the file, or split (Q8_0: each row's quants, then its
// scales, Note [Q8_0 rows split for the GPU], kernels/gemv_q8_0.cu; Q6_K: the blocks' parts in four planes,
// Note [Q6_K planes for the GPU], kernels/gemv_q6_k.cu): the same size, but aligned for wide loads, which
// the decode GEMVs read with a fraction of the load instructions.
enum class WeightLayout { File, Split };
// Whether `type` has a split layout (Q8_0, Q6_K).
bool has_split_layout(QuantType type);
// The layout uploads of a matrix of `type` and `cols` columns should take: Split where it exists and cols
// is a multiple of 256 (the GEMVs'), unless TRUENO_CUDA_DEFINES has TRUENO_Q8_0_SPLIT=0 or
// TRUENO_Q6_K_SPLIT=0 (tuning knobs).
WeightLayout preferred_layout(QuantType type, std::size_t cols);

// y[rows] = W x for any supported weight type: the quantized types read xq (quantize_q8_k of x), the
// float types x itself (rounded to f16 first for F16 weights when round_x). With accumulate, y += W x.
// A quantized W is read before the kernels launched just before it in the stream have finished (Note
// [Weights before the wait], kernels/prelude.cuh; each of them may still be waiting on its own
// predecessor): W must not be written by a kernel in the same stream. A copy into W is safe: the kernels
// after a copy start only once it has finished.
void gemv(Context& c, QuantType type, api::CUdeviceptr w, std::size_t rows, std::size_t cols, api::CUdeviceptr x,
          const Q8Activations* xq, api::CUdeviceptr y, bool round_x = false, bool accumulate = false,
          WeightLayout layout = WeightLayout::File);

// One matrix of a multi-matrix GEMV.
struct GemvTarget {
  api::CUdeviceptr w;
  std::size_t rows;
  api::CUdeviceptr y;
};
// One or two Q4_K matrices and one Q6_K matrix in the split layout, all `cols` wide, times the same
// Q8_K x in one launch (Note [Q4_K and Q6_K in one launch], kernels/gemv_mixed.cu): a Q4_K_M model's q, k
// and v. y as gemv_multi of each type would write it, bit for bit. InvalidArgument for other counts,
// widths that are not a multiple of 256 or a Q6_K matrix not 16-byte aligned.
void gemv_q4_k_q6_k(Context& c, std::span<const GemvTarget> q4_k, const GemvTarget& q6_k_split, std::size_t cols, const Q8Activations& xq,
                    bool accumulate = false);
// Whether the decode takes gemv_q4_k_q6_k where it can: TRUENO_GEMV_MIXED (a tuning knob) not 0.
bool gemv_mixed_launches();
// How a Q4_K or Q5_K GEMV's warps take their rows: one group of rows a warp (gemv_q4_k), or a grid of what
// is resident at once, each warp over several groups with its loads running across them (gemv_q4_k_stream,
// Note [A warp's loads across its row groups], kernels/gemv_k45.cuh). The same y, bit for bit. Auto: the
// stream kernels where they pay (TRUENO_GEMV_STREAM, a tuning knob), as gemv_multi takes them.
enum class K45Rows { Auto, OneGroup, Stream };
// gemv_multi for Q4_K or Q5_K with the kernel named; InvalidArgument for other types. gemv_multi calls it
// with Auto.
void gemv_k45(Context& c, QuantType type, std::span<const GemvTarget> targets, std::size_t cols, const Q8Activations& xq, bool accumulate,
              K45Rows how);
// Up to three matrices of the same type and width times the same x, in one launch (q, k, v; gate, up).
void gemv_multi(Context& c, QuantType type, std::span<const GemvTarget> targets, std::size_t cols, api::CUdeviceptr x,
                const Q8Activations* xq, bool round_x = false, bool accumulate = false, WeightLayout layout = WeightLayout::File);

}  // namespace trueno::cuda
