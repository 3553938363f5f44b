// The Vulkan backend of the public device tensors and ops (src/core/device_backend.h): one Context per
// device index, opened on first use and kept for the process; ops are recorded into that device's
// Recorder and submitted at the synchronization point (Note [Vulkan deferred submission]).
#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <vector>

#include "core/device_backend.h"
#include "core/device_op_codes.h"
#include "core/strings.h"
#include "trueno/vulkan/context.h"
#include "trueno/vulkan/ops.h"

namespace trueno::vulkan {
namespace {

using detail::DeviceStorage;
using detail::elementwise_code;
using detail::OpCall;
using detail::reduce_code;

constexpr std::uint32_t kWg = 256;  // power of two (the shared-memory reductions); matmul.comp needs 256

struct Storage : DeviceStorage {
  Storage(const Device& d, std::size_t bytes, std::shared_ptr<Context> c)
      : DeviceStorage(d, bytes), ctx(std::move(c)), buffer(*ctx, std::max<std::size_t>(bytes, 4)) {}
  std::shared_ptr<Context> ctx;  // declared first: destroyed after the buffer
  Buffer buffer;
};

// Note [Vulkan deferred submission]
// Ops are recorded into one command buffer per device and submitted when the user synchronizes (download,
// write, synchronize()) or when kMaxRecorded dispatches are pending, so a chain of ops costs one submit
// and one wait. What the recorded commands bind (tensors, scratch) is kept alive until that submit.
constexpr std::size_t kMaxRecorded = 512;

struct DeviceState {
  std::shared_ptr<Context> ctx;
  std::unique_ptr<Recorder> rec;
  std::vector<std::shared_ptr<void>> keep;
  std::mutex mu;
  void flush() {
    rec->submit();
    keep.clear();
  }
};

std::pair<std::uint32_t, std::uint32_t> grid(std::size_t groups) {
  const std::size_t x = std::min<std::size_t>(std::max<std::size_t>(groups, 1), 65535);
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>((groups + x - 1) / x)};
}

std::uint32_t u32(std::size_t v, DeviceOp op) {
  if (v > 0xffffffffu) throw ShapeError(strcat("vulkan ", name(op), ": ", v, " elements do not fit the shaders' 32-bit indices"));
  return static_cast<std::uint32_t>(v);
}

const Buffer& buf(const DeviceStorage* s) { return static_cast<const Storage*>(s)->buffer; }
Buffer& buf(DeviceStorage* s) { return static_cast<Storage*>(s)->buffer; }

// The backward ops' shaders (layouts: src/core/device_backend.h).
void record_grad(DeviceState& st, const OpCall& call) {
  Context& c = *st.ctx;
  Recorder& r = *st.rec;
  const DeviceOp op = call.op;
  const Buffer& a = buf(call.in[0]);
  Buffer& out = buf(call.out);
  const std::uint32_t m = u32(call.m, op), n = u32(call.n, op);
  switch (op) {
    case DeviceOp::RmsnormBackward: case DeviceOp::LayernormBackward: {
      if (m == 0) return;
      const std::uint32_t layer = op == DeviceOp::LayernormBackward;
      auto stats = std::make_shared<Buffer>(c, std::size_t{8} * m);
      st.keep.push_back(stats);
      Buffer& dw = buf(call.out2);
      Buffer& db = call.out3 ? buf(call.out3) : dw;
      struct { std::uint32_t n, rows; float eps; std::uint32_t accumulate; } push{n, m, call.eps, call.beta != 0.0f};
      const auto [gx, gy] = grid(m);
      const std::initializer_list<const Buffer*> bufs = {&a, &buf(call.in[1]), &buf(call.in[2]), stats.get(), &out, &dw, &db};
      for (std::uint32_t stage : {0u, 1u}) {
        const std::array<std::uint32_t, 3> spec = {kWg, stage, layer};
        r.dispatch(c.pipeline("norm_backward", 7, sizeof push, spec), bufs, push, gx, gy);
      }
      const std::array<std::uint32_t, 3> spec = {kWg, 2u, layer};
      const auto [px, py] = grid((call.n + kWg - 1) / kWg);
      r.dispatch(c.pipeline("norm_backward", 7, sizeof push, spec), bufs, push, px, py);
      return;
    }
    case DeviceOp::CrossEntropy: {
      struct { std::uint32_t n, rows; float scale; } push{n, m, call.alpha};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid(m);
      r.dispatch(c.pipeline("cross_entropy", 4, sizeof push, spec), {&a, &buf(call.in[1]), &out, &buf(call.out2)}, push, gx, gy);
      return;
    }
    case DeviceOp::RopeBackward: {
      const std::uint32_t head_dim = u32(call.k, op), rope_dim = u32(call.rope_dim, op);
      const std::size_t threads = call.m * call.n * (rope_dim / 2 + head_dim - rope_dim);
      if (threads == 0) return;
      struct { std::uint32_t rows, heads, head_dim, rope_dim, pos; float base; } push{
          m, n, head_dim, rope_dim, u32(call.pos + call.m, op) - m, call.base};
      const std::array<std::uint32_t, 2> spec = {kWg, call.neox ? 1u : 0u};
      const auto [gx, gy] = grid((threads + kWg - 1) / kWg);
      r.dispatch(c.pipeline("rope_backward", 2, sizeof push, spec), {&a, &out}, push, gx, gy);
      return;
    }
    case DeviceOp::EmbeddingBackward: {
      if (n == 0) return;
      struct { std::uint32_t tokens, dim, rows, accumulate; } push{m, n, u32(call.k, op), call.beta != 0.0f};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid((call.n + kWg - 1) / kWg);
      r.dispatch(c.pipeline("embedding_backward", 3, sizeof push, spec), {&a, &buf(call.in[1]), &out}, push, gx, gy);
      return;
    }
    case DeviceOp::BiasBackward: {
      if (n == 0) return;
      struct { std::uint32_t n, rows, accumulate; } push{n, m, call.beta != 0.0f};
      const std::array<std::uint32_t, 2> spec = {kWg, 1u};
      const auto [gx, gy] = grid((call.n + kWg - 1) / kWg);
      r.dispatch(c.pipeline("bias", 3, sizeof push, spec), {&a, &a, &out}, push, gx, gy);
      return;
    }
    case DeviceOp::AttentionBackward: {  // its causal softmax; the rest are other ops' calls
      struct { std::uint32_t n, rows; float scale; } push{n, m, call.alpha};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid(m);
      r.dispatch(c.pipeline("causal_softmax", 2, sizeof push, spec), {&a, &out}, push, gx, gy);
      return;
    }
    case DeviceOp::AdamwStep: {
      if (n == 0) return;
      const grad::AdamW& o = call.adamw;
      struct { std::uint32_t n; float lr, beta1, beta2, eps, wd, c1, c2; } push{
          n, o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, call.bias1, call.bias2};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid((call.n + kWg - 1) / kWg);
      r.dispatch(c.pipeline("adamw", 4, sizeof push, spec), {&a, &out, &buf(call.out2), &buf(call.out3)}, push, gx, gy);
      return;
    }
    default:
      throw BackendUnavailable(strcat("op ", name(op), " has no kernel on device ", call.device.str()));
  }
}

class Backend final : public detail::DeviceBackend {
 public:
  std::string missing(DeviceOp op, QuantType type) const override {
    if (op == DeviceOp::Matvec)
      return gemv_supports(type) ? "" : strcat(quant_info(type).name, " weights (gemv takes f32, f16, bf16, q4_0, q8_0, q4_k, q5_k, q6_k)");
    return type == kernel_input(op) ? "" : strcat("not ", quant_info(kernel_input(op)).name);
  }

  std::shared_ptr<DeviceStorage> allocate(const Device& d, std::size_t bytes) override {
    DeviceState& st = state(d);
    return std::make_shared<Storage>(d, bytes, st.ctx);
  }

  void write(DeviceStorage& s, const void* src, std::size_t bytes) override {
    DeviceState& st = state(s.device);
    std::lock_guard lock(st.mu);
    st.flush();
    buf(&s).upload(src, bytes);
  }

  void read(const DeviceStorage& s, void* dst, std::size_t bytes) override {
    DeviceState& st = state(s.device);
    std::lock_guard lock(st.mu);
    st.flush();
    buf(&s).download(dst, bytes);
  }

  void synchronize(const Device& d) override {
    DeviceState& st = state(d);
    std::lock_guard lock(st.mu);
    st.flush();
  }

  void enqueue(const OpCall& call, const std::shared_ptr<DeviceStorage>* keep, std::size_t keep_count) override {
    DeviceState& st = state(call.device);
    std::lock_guard lock(st.mu);
    st.keep.insert(st.keep.end(), keep, keep + keep_count);
    record(st, call);
    if (st.rec->recorded() >= kMaxRecorded) st.flush();
  }

 private:
  DeviceState& state(const Device& d) {
    std::lock_guard lock(mu_);
    std::unique_ptr<DeviceState>& p = devices_[d.index];
    if (!p) {
      auto st = std::make_unique<DeviceState>();
      st->ctx = Context::open(d.index);
      st->rec = std::make_unique<Recorder>(*st->ctx);
      p = std::move(st);
    }
    return *p;
  }

  void record(DeviceState& st, const OpCall& call);

  std::mutex mu_;
  std::map<int, std::unique_ptr<DeviceState>> devices_;
};

void Backend::record(DeviceState& st, const OpCall& call) {
  Context& c = *st.ctx;
  Recorder& r = *st.rec;
  const DeviceOp op = call.op;
  const Buffer& a = buf(call.in[0]);
  Buffer& out = buf(call.out);
  if (const int code = elementwise_code(op); code >= 0) {
    if (call.n == 0) return;
    const Buffer& b = call.in[1] ? buf(call.in[1]) : a;
    const std::array<std::uint32_t, 2> spec = {kWg, static_cast<std::uint32_t>(code)};
    struct { std::uint32_t n; float alpha; } push{u32(call.n, op), call.alpha};
    const auto [gx, gy] = grid((call.n + kWg - 1) / kWg);
    r.dispatch(c.pipeline("elementwise", 3, sizeof push, spec), {&a, &b, &out}, push, gx, gy);
    return;
  }
  switch (op) {
    case DeviceOp::Sum: case DeviceOp::Max: case DeviceOp::Dot: case DeviceOp::Min: case DeviceOp::Mean:
    case DeviceOp::Argmax: case DeviceOp::Argmin: {
      const bool index = op == DeviceOp::Argmax || op == DeviceOp::Argmin;
      const std::uint32_t groups = static_cast<std::uint32_t>(std::clamp<std::size_t>((call.n + 4 * kWg - 1) / (4 * kWg), 1, 1024));
      auto partials = std::make_shared<Buffer>(c, groups * (index ? 8 : 4));  // argmax: values, then indices
      st.keep.push_back(partials);
      struct { std::uint32_t n, groups, stage; } push{u32(call.n, op), groups, 0};
      if (index) {
        const std::array<std::uint32_t, 2> spec = {kWg, op == DeviceOp::Argmin ? 1u : 0u};
        const Pipeline& p = c.pipeline("arg_reduce", 3, sizeof push, spec);
        r.dispatch(p, {&a, partials.get(), &out}, push, groups);
        push.stage = 1;
        r.dispatch(p, {&a, partials.get(), &out}, push, 1);
        return;
      }
      const Buffer& b = call.in[1] ? buf(call.in[1]) : a;
      const std::array<std::uint32_t, 2> spec = {kWg, static_cast<std::uint32_t>(reduce_code(op))};
      const Pipeline& p = c.pipeline("reduce", 4, sizeof push, spec);
      r.dispatch(p, {&a, &b, partials.get(), &out}, push, groups);
      push.stage = 1;
      r.dispatch(p, {&a, &b, partials.get(), &out}, push, 1);
      return;
    }
    case DeviceOp::AddBias: {
      if (call.m * call.n == 0) return;
      struct { std::uint32_t n, rows, accumulate; } push{u32(call.n, op), u32(call.m, op), 0};
      const std::uint32_t total = u32(call.m * call.n, op);  // the shader's flat index must fit too
      const std::array<std::uint32_t, 2> spec = {kWg, 0u};
      const auto [gx, gy] = grid((std::size_t{total} + kWg - 1) / kWg);
      r.dispatch(c.pipeline("bias", 3, sizeof push, spec), {&a, &buf(call.in[1]), &out}, push, gx, gy);
      return;
    }
    case DeviceOp::Softmax: {
      struct { std::uint32_t n, count; } push{u32(call.n, op), u32(call.m, op)};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid(call.m);
      r.dispatch(c.pipeline("softmax", 2, sizeof push, spec), {&a, &out}, push, gx, gy);
      return;
    }
    case DeviceOp::SoftmaxBackward: {
      struct { std::uint32_t n, count; } push{u32(call.n, op), u32(call.m, op)};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid(call.m);
      r.dispatch(c.pipeline("softmax_backward", 3, sizeof push, spec), {&a, &buf(call.in[1]), &out}, push, gx, gy);
      return;
    }
    case DeviceOp::Rmsnorm:
      rmsnorm(r, a, buf(call.in[1]), call.eps, out, call.m, call.n);  // the decode shader (ops.h)
      return;
    case DeviceOp::Layernorm: {
      struct { std::uint32_t n; float eps; std::uint32_t count; } push{u32(call.n, op), call.eps, u32(call.m, op)};
      const std::array<std::uint32_t, 1> spec = {kWg};
      const auto [gx, gy] = grid(call.m);
      r.dispatch(c.pipeline("layernorm", 4, sizeof push, spec), {&a, &buf(call.in[1]), &buf(call.in[2]), &out}, push, gx, gy);
      return;
    }
    case DeviceOp::Matmul: case DeviceOp::MatmulBackward: {
      if (call.m == 0 || call.n == 0) return;
      if (call.k == 0) {  // an empty sum: C = 0, or C unchanged when accumulating
        if (call.beta == 0.0f) r.fill(out, 0);
        return;
      }
      struct {
        std::uint32_t m, n, k, trans_a, trans_b;
        float beta;
      } push{u32(call.m, op), u32(call.n, op), u32(call.k, op), call.trans_a, call.trans_b, call.beta};
      const std::array<std::uint32_t, 1> spec = {256};
      const Pipeline& p = c.pipeline("matmul", 3, sizeof push, spec);
      r.dispatch(p, {&a, &buf(call.in[1]), &out}, &push, sizeof push, u32((call.n + 63) / 64, op), u32((call.m + 63) / 64, op));
      return;
    }
    case DeviceOp::Matvec:
      if (call.m == 0) return;
      if (call.k == 0) {
        r.fill(out, 0);
        return;
      }
      gemv(r, call.type, a, call.m, call.k, buf(call.in[1]), 1, out);  // the decode shaders (ops.h)
      return;
    case DeviceOp::F32ToF16: case DeviceOp::F16ToF32: case DeviceOp::F32ToBf16: case DeviceOp::Bf16ToF32: {
      if (call.n == 0) return;
      const bool to_f32 = op == DeviceOp::F16ToF32 || op == DeviceOp::Bf16ToF32;
      const bool bf16 = op == DeviceOp::F32ToBf16 || op == DeviceOp::Bf16ToF32;
      const std::array<std::uint32_t, 2> spec = {kWg, (bf16 ? 2u : 0u) + (to_f32 ? 1u : 0u)};  // convert.comp's MODE
      struct { std::uint32_t n; } push{u32(call.n, op)};
      const std::size_t threads = to_f32 ? call.n : (call.n + 1) / 2;
      const auto [gx, gy] = grid((threads + kWg - 1) / kWg);
      r.dispatch(c.pipeline("convert", 2, sizeof push, spec), {&a, &out}, push, gx, gy);
      return;
    }
    default:
      record_grad(st, call);
  }
}

}  // namespace

detail::DeviceBackend& tensor_backend() {
  static Backend b;
  return b;
}

}  // namespace trueno::vulkan
