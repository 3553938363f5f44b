// Quantized tensor formats, byte-compatible with GGUF (layouts: ../shared/docs/quant-formats.md):
// type table, row sizes, a typed view over a row of blocks, and the reference dequantize/quantize.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "trueno/backend.h"

namespace trueno {

// Values are the GGUF type ids.
enum class QuantType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  I32 = 26,  // not a weight format: token ids and class targets on devices (DeviceTensor::upload_ids)
  BF16 = 30,
};

struct QuantTypeInfo {
  QuantType type;
  std::string_view name;  // "q4_k", "f16", ...
  std::size_t block_elems;
  std::size_t block_bytes;
};

inline constexpr QuantType kQuantTypes[] = {QuantType::F32,  QuantType::F16,  QuantType::BF16,
                                           QuantType::Q4_0, QuantType::Q8_0, QuantType::Q4_K,
                                           QuantType::Q5_K, QuantType::Q6_K, QuantType::Q8_K};

const QuantTypeInfo& quant_info(QuantType t);
// Throws InvalidArgument for ids trueno does not implement, naming the id and the supported types.
QuantType quant_type_from_id(std::uint32_t ggml_type_id);
QuantType parse_quant_type(std::string_view name);
// Bytes of a row of n elements; throws ShapeError when n is not a multiple of the block size.
std::size_t quant_row_bytes(QuantType t, std::size_t n);

// A row of n elements of type `type` stored in `bytes` (exactly quant_row_bytes(type, n) of them).
struct QuantRow {
  QuantType type;
  std::span<const std::byte> bytes;
  std::size_t n;
  // Checks the sizes; throws ShapeError naming type, n and the byte counts.
  static QuantRow view(QuantType type, std::span<const std::byte> bytes, std::size_t n);
};

// Dequantization to f32 on the current (or given) backend: out[i] = the value the format encodes,
// computed with the format's f32 operations; every backend gives identical bits (out.size() == row.n).
void dequantize(const QuantRow& row, std::span<float> out, std::optional<Backend> backend = {});
// The exact values in double (every format's values are f16/f32 scales times small integers, exact
// in 53 bits): a reference for tests of fused kernels.
void dequantize_exact(const QuantRow& row, std::span<double> out);
// Reference quantization of x into `out` (quant_row_bytes(type, x.size()) bytes): per-block scale
// (and min) search for the k-quants, round to nearest for the rest.
void quantize(QuantType type, std::span<const float> x, std::span<std::byte> out);

// ---- fused quantized kernels (weights read once, never dequantized to memory) ----
// W is row-major: `rows` rows of quant_row_bytes(type, cols) bytes. The activations are quantized once
// per call to Q8_K (k-quant weights) or Q8_0 (Q4_0/Q8_0 weights) and multiplied as integers (Note
// [Quantized activations], src/cpu/kernels/qdot/qdot_impl.h); F32/F16/BF16 weights use f32 dots.
// Rows are split across trueno::num_threads(); results do not depend on the thread count.

// A weight matrix with its rows also repacked 8 at a time (Note [Interleaved rows], src/quant/blocks.h)
// for the 8-row decode kernels: one activation row (quant_matvec, quant_matvec_multi,
// quant_gate_up_swiglu) takes those; the original bytes serve the rows past the last multiple of 8
// and every call with more than one activation row. Memory: a second copy of the packed rows (their
// bytes, plus 2.8% for Q4_K: its scales decoded to bytes), beside the original.
// Holds a view of the original bytes: they must outlive the PackedQuantMatrix and stay unchanged.
class PackedQuantMatrix {
 public:
  // Nothing when the CPU tier `backend` resolves to has no 8-row kernel for `type` that beats the
  // single-row dot: for now Q4_K and Q6_K on AVX2 and AVX-512. Throws ShapeError on a size mismatch.
  static std::optional<PackedQuantMatrix> pack(QuantType type, std::span<const std::byte> w, std::size_t rows,
                                               std::size_t cols, std::optional<Backend> backend = {});
  QuantType type() const { return type_; }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::span<const std::byte> original() const { return original_; }
  // Rows [0, packed_rows()) in groups of 8, each group's blocks contiguous.
  std::size_t packed_rows() const { return packed_rows_; }
  std::span<const std::byte> packed() const { return {packed_.get(), packed_bytes_}; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  PackedQuantMatrix() = default;
  QuantType type_ = QuantType::Q4_K;
  std::span<const std::byte> original_;
  std::size_t rows_ = 0, cols_ = 0, packed_rows_ = 0, packed_bytes_ = 0;
  std::unique_ptr<std::byte[], Free> packed_;  // 2 MiB aligned, huge pages asked for (Linux)
};

// Whether PackedQuantMatrix::pack packs `type` for the CPU tier `backend` resolves to.
bool has_fast_x8(QuantType type, std::optional<Backend> backend = {});

// y[rows] = W x
void quant_matvec(QuantType type, std::span<const std::byte> w, std::size_t rows, std::size_t cols,
                  std::span<const float> x, std::span<float> y, std::optional<Backend> backend = {});
// The same with the packed rows: equal to quant_matvec of w.original() bit for bit.
void quant_matvec(const PackedQuantMatrix& w, std::span<const float> x, std::span<float> y,
                  std::optional<Backend> backend = {});
// out[rows] = silu(W_gate x) * (W_up x), one pass over both weight matrices. packed_gate / packed_up, when
// given, are the same matrices packed (same results, bit for bit).
void quant_gate_up_swiglu(QuantType type, std::span<const std::byte> w_gate, std::span<const std::byte> w_up,
                          std::size_t rows, std::size_t cols, std::span<const float> x, std::span<float> out,
                          std::optional<Backend> backend = {}, const PackedQuantMatrix* packed_gate = nullptr,
                          const PackedQuantMatrix* packed_up = nullptr);
// One matrix of quant_matvec_multi: y[rows] = W x.
struct QuantMatvecPart {
  QuantType type;
  std::span<const std::byte> w;
  std::size_t rows;
  std::span<float> y;
  const PackedQuantMatrix* packed = nullptr;  // w packed (same results), or null
};
// Several matrices applied to the same x (decode: Q, K and V): x is quantized once per activation format
// and the rows of all the matrices are split across the pool in one parallel region. Each y equals
// quant_matvec of its matrix exactly.
void quant_matvec_multi(std::span<const QuantMatvecPart> parts, std::size_t cols, std::span<const float> x,
                        std::optional<Backend> backend = {});
// Y[m][rows] = X[m][cols] W^T for m activation rows (prefill): each weight row is read from memory once
// and applied to all m rows while it is in cache. Row i of Y equals quant_matvec of row i of X exactly.
void quant_matmul(QuantType type, std::span<const std::byte> w, std::size_t rows, std::size_t cols,
                  std::span<const float> x, std::size_t m, std::span<float> y, std::optional<Backend> backend = {});

}  // namespace trueno
