// The f16 operands of the cuBLAS products, a layer ahead (Note [Dequantization ahead], f16_staging.h).
#include "backends/cuda/f16_staging.h"

#include <algorithm>
#include <cstdio>

#include "backends/cuda/cuda_sequence.h"
#include "trueno/cuda/ops/convert.h"

namespace realizar::cuda_forward {
namespace {

bool needs_f16(const DeviceMatrix& w) { return w.type != trueno::QuantType::F32 && w.f16.bytes() == 0 && !w.fp8; }

std::size_t f16_bytes(const DeviceMatrix& w) { return w.rows * w.cols * 2; }

}  // namespace

F16Staging::F16Staging(const CudaWeights& w) : w_(w), ctx_(*w.ctx) {
  std::size_t layer_bytes = 0, largest = 0;
  for (const DeviceLayer& l : w.layers) {
    std::vector<Slot>& slots = slots_.emplace_back();
    std::size_t offset = 0;
    for (const DeviceMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) {
      if (!needs_f16(*m)) continue;
      slots.push_back({m, offset});
      offset += (f16_bytes(*m) + 255) / 256 * 256;
      largest = std::max(largest, f16_bytes(*m));
    }
    layer_bytes = std::max(layer_bytes, offset);
  }
  const std::size_t output = needs_f16(w.output) ? f16_bytes(w.output) : 0;
  ctx_.make_current();
  if (layer_bytes != 0 && w.layers.size() > 1) {
    try {
      layer_buffers_[0] = cu::DeviceBuffer(ctx_, layer_bytes), layer_buffers_[1] = cu::DeviceBuffer(ctx_, layer_bytes);
      ahead_ = true;
    } catch (const cu::CudaError& e) {  // no room for two layers: one matrix at a time, as before
      layer_buffers_[0] = cu::DeviceBuffer(), layer_buffers_[1] = cu::DeviceBuffer();
      std::fprintf(stderr, "realizar: cuda: prompt products dequantize one matrix at a time (no room for two layers of f16: %s)\n",
                   e.what());
    }
  }
  const std::size_t other = ahead_ ? output : std::max(output, largest);
  if (other != 0) other_ = cu::DeviceBuffer(ctx_, other);
  if (!ahead_) return;
  const cu::Driver& d = ctx_.driver();
  cu::check(d.stream_create(&side_, cu::api::kStreamNonBlocking), "cuStreamCreate(dequantization stream)");
  for (auto& e : ready_) cu::check(d.event_create(&e, cu::api::kEventDisableTiming), "cuEventCreate");
  cu::check(d.event_create(&done_, cu::api::kEventDisableTiming), "cuEventCreate");
}

F16Staging::~F16Staging() {
  if (side_ == nullptr) return;
  ctx_.make_current();
  const cu::Driver& d = ctx_.driver();
  d.stream_synchronize(side_);  // its last dequantization may still be writing a layer buffer
  for (auto e : ready_) d.event_destroy(e);
  d.event_destroy(done_);
  d.stream_destroy(side_);
}

F16Staging::Pass::Pass(F16Staging& s) : s_(s), lock_(s.mutex_) {
  if (!s_.ahead_) return;
  // Layer 0's buffer may still be read by the previous pass's products: the side stream waits for them.
  const cu::Driver& d = s_.ctx_.driver();
  cu::check(d.event_record(s_.done_, s_.ctx_.stream()), "cuEventRecord");
  cu::check(d.stream_wait_event(s_.side_, s_.done_, 0), "cuStreamWaitEvent");
  dequantize_layer(0);
}

void F16Staging::Pass::enter(std::size_t layer) {
  layer_ = layer;
  if (!s_.ahead_) return;
  const cu::Driver& d = s_.ctx_.driver();
  cu::check(d.stream_wait_event(s_.ctx_.stream(), s_.ready_[layer % 2], 0), "cuStreamWaitEvent");
  if (layer + 1 >= s_.slots_.size()) return;
  // Everything enqueued before this layer's products (layer - 1's, which read the other buffer) is done
  // before the side stream overwrites that buffer with layer + 1.
  cu::check(d.event_record(s_.done_, s_.ctx_.stream()), "cuEventRecord");
  cu::check(d.stream_wait_event(s_.side_, s_.done_, 0), "cuStreamWaitEvent");
  dequantize_layer(layer + 1);
}

void F16Staging::Pass::dequantize_layer(std::size_t layer) {
  const cu::DeviceBuffer& buffer = s_.layer_buffers_[layer % 2];
  for (const Slot& slot : s_.slots_[layer]) {
    const DeviceMatrix& w = *slot.w;
    cu::dequantize_f16(s_.ctx_, w.type, w.data.ptr(), w.rows, w.cols, buffer.ptr() + slot.offset, s_.side_, w.layout);
  }
  cu::check(s_.ctx_.driver().event_record(s_.ready_[layer % 2], s_.side_), "cuEventRecord");
}

cu::api::CUdeviceptr F16Staging::Pass::f16(const DeviceMatrix& w) {
  if (s_.ahead_ && layer_ < s_.slots_.size())
    for (const Slot& slot : s_.slots_[layer_])
      if (slot.w == &w) return s_.layer_buffers_[layer_ % 2].ptr() + slot.offset;
  cu::dequantize_f16(s_.ctx_, w.type, w.data.ptr(), w.rows, w.cols, s_.other_.ptr(), nullptr, w.layout);
  return s_.other_.ptr();
}

}  // namespace realizar::cuda_forward
