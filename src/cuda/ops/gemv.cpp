// Launchers for kernels/quantize_q8_k.cu and kernels/gemv_q4_k.cu (gemv.h).
#include "cuda/ops/gemv.h"

#include "core/strings.h"

namespace trueno::cuda {
namespace {

constexpr std::size_t kQK = 256;  // elements per Q8_K / Q4_K block
constexpr unsigned kWarps = 8, kRowsPerWarp = 2;  // as in kernels/gemv_q4_k.cu
constexpr unsigned kRowsPerBlock = kWarps * kRowsPerWarp;

std::size_t check_blocks(const char* op, std::size_t n) {
  if (n == 0 || n % kQK != 0) throw ShapeError(strcat(op, ": length ", n, " is not a positive multiple of ", kQK));
  return n;
}

}  // namespace

Q8Activations::Q8Activations(std::size_t n_)
    : n(check_blocks("Q8Activations", n_)), q(n_), d(n_ / kQK * sizeof(float)), bsums(n_ / 16 * sizeof(short)) {}

void quantize_q8_k(Context& c, api::CUdeviceptr x, Q8Activations& out) {
  check_blocks("cuda quantize_q8_k", out.n);
  static api::CUfunction f = c.function("quantize_q8_k", "quantize_q8_k");
  api::CUdeviceptr q = out.q.ptr(), d = out.d.ptr(), bs = out.bsums.ptr();
  void* params[] = {&x, &q, &d, &bs};
  launch(c, f, static_cast<unsigned>(out.n / kQK), 1, 256, 1, params);
}

void gemv_q4_k(Context& c, api::CUdeviceptr w, std::size_t rows, std::size_t cols, const Q8Activations& x, api::CUdeviceptr y) {
  check_blocks("cuda gemv_q4_k", cols);
  if (x.n != cols) throw ShapeError(strcat("cuda gemv_q4_k: activations have ", x.n, " elements, the matrix ", cols, " columns"));
  if (rows == 0) return;
  static api::CUfunction f = c.function("gemv_q4_k", "gemv_q4_k");
  api::CUdeviceptr q = x.q.ptr(), d = x.d.ptr(), bs = x.bsums.ptr();
  int r = static_cast<int>(rows), nb = static_cast<int>(cols / kQK);
  void* params[] = {&w, &q, &d, &bs, &y, &r, &nb};
  launch(c, f, static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), 1, 32, kWarps, params);
}

}  // namespace trueno::cuda
