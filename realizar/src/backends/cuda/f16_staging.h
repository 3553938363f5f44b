// The f16 operands of a set of weights' cuBLAS products (prompt chunks, batched steps), dequantized a
// layer ahead on a second stream.
//
// Note [Dequantization ahead]
// A prompt chunk or a batched step multiplies every quantized matrix as f16 (Note [Batched prefill]).
// Dequantizing each matrix just before its product left the tensor cores idle for a quarter of a
// 512-token chunk of a 7B model (~5 of ~21 ms). Here layer l + 1's matrices are dequantized on a second
// stream into one of two layer buffers while layer l's products run on the context's stream; events
// order "layer l dequantized" before layer l's products and "layer l - 1's products done" before its
// buffer takes layer l + 1. Matrices outside the layers (the output) are dequantized on the spot into a
// buffer of their own. One staging per set of weights, shared by its sequences, which share the
// context's stream anyway; a pass holds the staging's lock. Memory: two layers of f16 (0.8 GB for a 7B
// model) plus the largest other matrix; when two layers do not fit, every matrix is dequantized on the
// spot into one buffer (the order of work before this staging).
#pragma once
#include <array>
#include <mutex>
#include <vector>

#include "trueno/cuda/context.h"

namespace realizar::cuda_forward {

namespace cu = trueno::cuda;
class CudaWeights;
struct DeviceMatrix;

class F16Staging {
 public:
  explicit F16Staging(const CudaWeights& w);
  ~F16Staging();
  F16Staging(const F16Staging&) = delete;
  F16Staging& operator=(const F16Staging&) = delete;

  // One pass over the layers, in order: enter(l) before layer l's products, then f16(w) for each.
  class Pass {
   public:
    explicit Pass(F16Staging& s);
    void enter(std::size_t layer);
    // w's rows as f16: in the current layer's buffer, or dequantized now (on the context's stream).
    cu::api::CUdeviceptr f16(const DeviceMatrix& w);

   private:
    void dequantize_layer(std::size_t layer);
    F16Staging& s_;
    std::unique_lock<std::mutex> lock_;
    std::size_t layer_ = SIZE_MAX;
  };

 private:
  struct Slot {
    const DeviceMatrix* w;
    std::size_t offset;  // bytes into a layer buffer
  };
  const CudaWeights& w_;
  cu::Context& ctx_;
  std::mutex mutex_;
  std::vector<std::vector<Slot>> slots_;  // per layer: its matrices that need dequantizing
  std::array<cu::DeviceBuffer, 2> layer_buffers_;
  cu::DeviceBuffer other_;  // a matrix dequantized on the spot
  bool ahead_ = false;      // two layer buffers fitted
  cu::api::CUstream side_ = nullptr;
  std::array<cu::api::CUevent, 2> ready_{};  // layer l's buffer is filled: ready_[l % 2]
  cu::api::CUevent done_ = nullptr;          // the products enqueued so far are done
};

}  // namespace realizar::cuda_forward
