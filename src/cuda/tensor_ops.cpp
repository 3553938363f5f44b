// The CUDA backend of the public device tensors and ops (src/core/device_backend.h): one Context per
// device index, opened on first use and kept for the process. Ops launch asynchronously on the
// context's stream (kernels/tensor_ops.cu; cuBLAS for matmul and f32 matvec; the decode GEMV kernels
// for quantized matvec; kernels/grad_ops.cu for the backward ops); read(), write() and synchronize() wait for the stream.
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <vector>

#include "core/device_backend.h"
#include "core/device_op_codes.h"
#include "core/strings.h"
#include "trueno/cuda/context.h"
#include "trueno/cuda/ops/gemm.h"
#include "trueno/cuda/ops/gemv.h"

namespace trueno::cuda {
namespace {

using detail::DeviceStorage;
using detail::elementwise_code;
using detail::OpCall;
using detail::reduce_code;

constexpr unsigned kThreads = 256;  // tensor_ops.cu's block reductions assume it

struct Storage : DeviceStorage {
  Storage(const Device& d, std::size_t bytes, std::shared_ptr<Context> c)
      : DeviceStorage(d, bytes), ctx(std::move(c)), buffer(*ctx, std::max<std::size_t>(bytes, 4)) {}
  std::shared_ptr<Context> ctx;  // declared first: destroyed after the buffer
  DeviceBuffer buffer;
};

// What enqueued launches use stays referenced until the stream is synchronized; past this many
// references an enqueue synchronizes first, so a loop that never waits does not hold memory forever.
constexpr std::size_t kMaxKept = 4096;

struct DeviceState {
  std::shared_ptr<Context> ctx;
  std::vector<std::shared_ptr<void>> keep;
  std::mutex mu;
  void wait() {
    ctx->synchronize();
    keep.clear();
  }
};

api::CUdeviceptr ptr(const DeviceStorage* s) { return static_cast<const Storage*>(s)->buffer.ptr(); }

std::uint32_t u32(std::size_t v, DeviceOp op) {
  if (v > 0xffffffffu) throw ShapeError(strcat("cuda ", name(op), ": ", v, " elements do not fit the kernels' 32-bit indices"));
  return static_cast<std::uint32_t>(v);
}

unsigned blocks_for(const Context& c, std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, static_cast<std::size_t>(std::max(c.info().sms, 1)) * 32));
}

// One block per row, rows spread over x and y (x <= 65535).
void launch_rows(Context& c, api::CUfunction f, std::size_t rows, void** params) {
  const unsigned gx = static_cast<unsigned>(std::clamp<std::size_t>(rows, 1, 65535));
  const unsigned gy = static_cast<unsigned>((rows + gx - 1) / gx);
  launch(c, f, gx, gy, kThreads, 1, params);
}

// Note [Row-major GEMM through cuBLAS]
// cuBLAS is column-major; a row-major X [r][c] is, read column-major, X^T (c x r, leading dimension c).
// So row-major C[M][N] = op(A) op(B) is computed as column-major C^T = op(B)^T op(A)^T: cuBLAS's first
// operand is B's buffer, N when B is stored k x n (its column-major reading is B^T already, ld N), T when
// B is stored transposed (n x k, ld K); likewise A as the second (ld K, or M when stored k x m).
void gemm_row_major(Context& c, const OpCall& call, api::CUdeviceptr a, api::CUdeviceptr b, api::CUdeviceptr out) {
  if (call.m > INT_MAX || call.n > INT_MAX || call.k > INT_MAX)
    throw ShapeError(strcat("cuda ", name(call.op), ": ", call.m, " x ", call.k, " x ", call.n, " is outside cuBLAS's int sizes"));
  const Cublas* blas = cublas();
  if (blas == nullptr) throw BackendUnavailable(strcat("op ", name(call.op), " on ", call.device.str(), ": cuBLAS could not be loaded"));
  const int M = static_cast<int>(call.m), N = static_cast<int>(call.n), K = static_cast<int>(call.k);
  const float one = 1.0f, beta = call.beta;
  check_cublas(blas->gemm_ex(c.cublas_handle(), call.trans_b ? api::kCublasOpT : api::kCublasOpN, call.trans_a ? api::kCublasOpT : api::kCublasOpN,
                             N, M, K, &one, reinterpret_cast<const void*>(b), api::kCudaR32F, call.trans_b ? K : N,
                             reinterpret_cast<const void*>(a), api::kCudaR32F, call.trans_a ? M : K, &beta, reinterpret_cast<void*>(out),
                             api::kCudaR32F, N, api::kCublasCompute32F, api::kCublasGemmDefault),
               "cublasGemmEx(f32, row-major)");
}

// The backward ops of kernels/grad_ops.cu (layouts: src/core/device_backend.h).
void record_grad(DeviceState& st, const OpCall& call) {
  Context& c = *st.ctx;
  const DeviceOp op = call.op;
  api::CUdeviceptr a = ptr(call.in[0]), out = ptr(call.out);
  const auto f = [&](const char* kernel) { return c.function("grad_ops", kernel); };
  std::uint32_t m = u32(call.m, op), n = u32(call.n, op);
  switch (op) {
    case DeviceOp::RmsnormBackward: case DeviceOp::LayernormBackward: {
      if (m == 0) return;
      int layer = op == DeviceOp::LayernormBackward, accumulate = call.beta != 0.0f;
      auto stats = std::make_shared<DeviceBuffer>(c, std::size_t{8} * m);
      st.keep.push_back(stats);
      api::CUdeviceptr w = ptr(call.in[1]), dy = ptr(call.in[2]), sp = stats->ptr(), dw = ptr(call.out2);
      api::CUdeviceptr db = call.out3 ? ptr(call.out3) : dw;
      float eps = call.eps;
      void* p_stats[] = {&a, &sp, &n, &m, &eps, &layer};
      launch_rows(c, f("grad_norm_stats_rows"), m, p_stats);
      void* p_dx[] = {&a, &w, &dy, &sp, &out, &n, &m, &layer};
      launch_rows(c, f("grad_norm_dx_rows"), m, p_dx);
      void* p_params[] = {&a, &dy, &sp, &dw, &db, &n, &m, &layer, &accumulate};
      launch(c, f("grad_norm_params_cols"), (n + kThreads - 1) / kThreads, 1, kThreads, 1, p_params);
      return;
    }
    case DeviceOp::CrossEntropy: {
      if (m == 0) return;
      api::CUdeviceptr targets = ptr(call.in[1]), loss = ptr(call.out2);
      float scale = call.alpha;
      void* params[] = {&a, &targets, &out, &loss, &n, &m, &scale};
      launch_rows(c, f("grad_cross_entropy_rows"), m, params);
      return;
    }
    case DeviceOp::RopeBackward: {
      std::uint32_t head_dim = u32(call.k, op), rope_dim = u32(call.rope_dim, op), pos = u32(call.pos + call.m, op) - m;  // the last position must fit too
      const std::size_t threads = call.m * call.n * (rope_dim / 2 + head_dim - rope_dim);
      if (threads == 0) return;
      float base = call.base;
      int neox = call.neox;
      void* params[] = {&a, &out, &m, &n, &head_dim, &rope_dim, &pos, &base, &neox};
      launch_rows(c, f("grad_rope_rows"), (threads + kThreads - 1) / kThreads, params);
      return;
    }
    case DeviceOp::EmbeddingBackward: {
      if (n == 0) return;
      std::uint32_t rows = u32(call.k, op);
      int accumulate = call.beta != 0.0f;
      api::CUdeviceptr dy = ptr(call.in[1]);
      void* params[] = {&a, &dy, &out, &m, &n, &rows, &accumulate};
      launch(c, f("grad_embedding_cols"), (n + kThreads - 1) / kThreads, 1, kThreads, 1, params);
      return;
    }
    case DeviceOp::BiasBackward: {
      if (n == 0) return;
      int accumulate = call.beta != 0.0f;
      void* params[] = {&a, &out, &n, &m, &accumulate};
      launch(c, f("grad_bias_cols"), (n + kThreads - 1) / kThreads, 1, kThreads, 1, params);
      return;
    }
    case DeviceOp::AttentionBackward: {  // its causal softmax; the rest are other ops' calls
      if (m == 0) return;
      float scale = call.alpha;
      void* params[] = {&a, &out, &n, &m, &scale};
      launch_rows(c, f("grad_causal_softmax_rows"), m, params);
      return;
    }
    case DeviceOp::AdamwStep: {
      if (n == 0) return;
      api::CUdeviceptr g = a, w = out, mm = ptr(call.out2), v = ptr(call.out3);
      const grad::AdamW& o = call.adamw;
      float lr = o.lr, b1 = o.beta1, b2 = o.beta2, eps = o.eps, wd = o.weight_decay, c1 = call.bias1, c2 = call.bias2;
      void* params[] = {&w, &g, &mm, &v, &n, &lr, &b1, &b2, &eps, &wd, &c1, &c2};
      launch(c, f("grad_adamw"), blocks_for(c, call.n), 1, kThreads, 1, params);
      return;
    }
    default:
      throw BackendUnavailable(strcat("op ", name(op), " has no kernel on device ", call.device.str()));
  }
}

void record(DeviceState& st, const OpCall& call) {
  Context& c = *st.ctx;
  const DeviceOp op = call.op;
  api::CUdeviceptr a = ptr(call.in[0]), out = ptr(call.out);
  if (const int code = elementwise_code(op); code >= 0) {
    if (call.n == 0) return;
    api::CUdeviceptr b = call.in[1] ? ptr(call.in[1]) : a;
    std::uint32_t n = u32(call.n, op);
    int code_ = code;
    float alpha = call.alpha;
    void* params[] = {&a, &b, &out, &n, &code_, &alpha};
    launch(c, c.function("tensor_ops", "tensor_elementwise"), blocks_for(c, call.n), 1, kThreads, 1, params);
    return;
  }
  switch (op) {
    case DeviceOp::Sum: case DeviceOp::Max: case DeviceOp::Dot: case DeviceOp::Min: case DeviceOp::Mean:
    case DeviceOp::Argmax: case DeviceOp::Argmin: {
      const bool index = op == DeviceOp::Argmax || op == DeviceOp::Argmin;
      std::uint32_t n = u32(call.n, op);
      std::uint32_t groups = static_cast<std::uint32_t>(std::clamp<std::size_t>((call.n + 4 * kThreads - 1) / (4 * kThreads), 1, 1024));
      auto partials = std::make_shared<DeviceBuffer>(c, groups * (index ? 8 : 4));  // argmax: values, then indices
      st.keep.push_back(partials);
      api::CUdeviceptr p = partials->ptr();
      int stage = 0;
      if (index) {
        int is_min = op == DeviceOp::Argmin;
        const api::CUfunction f = c.function("tensor_ops", "tensor_arg_reduce");
        void* params[] = {&a, &p, &out, &n, &is_min, &stage, &groups};
        launch(c, f, groups, 1, kThreads, 1, params);
        stage = 1;
        launch(c, f, 1, 1, kThreads, 1, params);
        return;
      }
      int code = reduce_code(op);
      api::CUdeviceptr b = call.in[1] ? ptr(call.in[1]) : a;
      const api::CUfunction f = c.function("tensor_ops", "tensor_reduce");
      void* params[] = {&a, &b, &p, &out, &n, &code, &stage, &groups};
      launch(c, f, groups, 1, kThreads, 1, params);
      stage = 1;
      launch(c, f, 1, 1, kThreads, 1, params);
      return;
    }
    case DeviceOp::AddBias: {
      if (call.m * call.n == 0) return;
      std::uint32_t n = u32(call.n, op), total = u32(call.m * call.n, op);
      api::CUdeviceptr b = ptr(call.in[1]);
      void* params[] = {&a, &b, &out, &n, &total};
      launch(c, c.function("tensor_ops", "tensor_add_bias_rows"), blocks_for(c, call.m * call.n), 1, kThreads, 1, params);
      return;
    }
    case DeviceOp::Softmax: {
      std::uint32_t n = u32(call.n, op), rows = u32(call.m, op);
      if (rows == 0) return;
      void* params[] = {&a, &out, &n, &rows};
      launch_rows(c, c.function("tensor_ops", "tensor_softmax_rows"), rows, params);
      return;
    }
    case DeviceOp::SoftmaxBackward: {
      std::uint32_t n = u32(call.n, op), rows = u32(call.m, op);
      if (rows == 0) return;
      api::CUdeviceptr dy = ptr(call.in[1]);
      void* params[] = {&a, &dy, &out, &n, &rows};
      launch_rows(c, c.function("tensor_ops", "tensor_softmax_backward_rows"), rows, params);
      return;
    }
    case DeviceOp::Rmsnorm: {
      std::uint32_t n = u32(call.n, op), rows = u32(call.m, op);
      if (rows == 0) return;
      api::CUdeviceptr w = ptr(call.in[1]);
      float eps = call.eps;
      void* params[] = {&a, &w, &out, &n, &rows, &eps};
      launch_rows(c, c.function("tensor_ops", "tensor_rmsnorm_rows"), rows, params);
      return;
    }
    case DeviceOp::Layernorm: {
      std::uint32_t n = u32(call.n, op), rows = u32(call.m, op);
      if (rows == 0) return;
      api::CUdeviceptr w = ptr(call.in[1]), b = ptr(call.in[2]);
      float eps = call.eps;
      void* params[] = {&a, &w, &b, &out, &n, &rows, &eps};
      launch_rows(c, c.function("tensor_ops", "tensor_layernorm_rows"), rows, params);
      return;
    }
    case DeviceOp::Matmul: case DeviceOp::MatmulBackward:
      if (call.m == 0 || call.n == 0) return;
      if (call.k == 0) {  // an empty sum: C = 0, or C unchanged when accumulating
        if (call.beta == 0.0f)
          check(c.driver().memset_d8_async(out, 0, call.m * call.n * 4, c.stream()), "cuMemsetD8Async(matmul of k = 0)");
        return;
      }
      gemm_row_major(c, call, a, ptr(call.in[1]), out);
      return;
    case DeviceOp::Matvec: {
      if (call.m == 0) return;
      if (call.k == 0) {
        check(c.driver().memset_d8_async(out, 0, call.m * 4, c.stream()), "cuMemsetD8Async(matvec of k = 0)");
        return;
      }
      if (call.type == QuantType::F32) {  // cuBLAS: y[1][m] = x[1][k] W^T
        gemm(c, GemmOperand::F32, call.m, 1, call.k, a, ptr(call.in[1]), out);
        return;
      }
      std::shared_ptr<Q8Activations> xq;
      if (gemv_takes_q8(call.type)) {  // the CPU's quant_matvec quantizes the activations too
        xq = std::make_shared<Q8Activations>(c, call.k);
        st.keep.push_back(xq);
        quantize_q8_k(c, ptr(call.in[1]), *xq);
      }
      gemv(c, call.type, a, call.m, call.k, ptr(call.in[1]), xq.get(), out);
      return;
    }
    case DeviceOp::F32ToF16: case DeviceOp::F16ToF32: case DeviceOp::F32ToBf16: case DeviceOp::Bf16ToF32: {
      if (call.n == 0) return;
      std::uint32_t n = u32(call.n, op);
      void* params[] = {&a, &out, &n};
      const char* kernel = op == DeviceOp::F32ToF16   ? "tensor_f32_to_f16"  // literals: Context::function keys on the pointer
                           : op == DeviceOp::F16ToF32 ? "tensor_f16_to_f32"
                           : op == DeviceOp::F32ToBf16 ? "tensor_f32_to_bf16"
                                                       : "tensor_bf16_to_f32";
      launch(c, c.function("tensor_ops", kernel), blocks_for(c, call.n), 1, kThreads, 1, params);
      return;
    }
    default:
      record_grad(st, call);
  }
}

class Backend final : public detail::DeviceBackend {
 public:
  std::string missing(DeviceOp op, QuantType type) const override {
    if (op == DeviceOp::Matvec)
      return gemv_supports(type) ? "" : strcat(quant_info(type).name, " weights (the GEMV takes f32, f16, bf16, q4_0, q8_0, q4_k, q5_k, q6_k)");
    return type == kernel_input(op) ? "" : strcat("not ", quant_info(kernel_input(op)).name);
  }

  std::shared_ptr<DeviceStorage> allocate(const Device& d, std::size_t bytes) override {
    DeviceState& st = state(d);
    st.ctx->make_current();
    return std::make_shared<Storage>(d, bytes, st.ctx);
  }

  // Copies go through the context's stream (a non-blocking stream: a synchronous cuMemcpy on the legacy
  // stream would not be ordered with its kernels), then wait, since the host memory is pageable.
  void write(DeviceStorage& s, const void* src, std::size_t bytes) override {
    DeviceState& st = state(s.device);
    std::lock_guard lock(st.mu);
    st.ctx->make_current();
    st.wait();
    check(st.ctx->driver().memcpy_htod_async(ptr(&s), src, bytes, st.ctx->stream()), "cuMemcpyHtoDAsync(DeviceTensor)");
    st.ctx->synchronize();
  }

  void read(const DeviceStorage& s, void* dst, std::size_t bytes) override {
    DeviceState& st = state(s.device);
    std::lock_guard lock(st.mu);
    st.ctx->make_current();
    check(st.ctx->driver().memcpy_dtoh_async(dst, ptr(&s), bytes, st.ctx->stream()), "cuMemcpyDtoHAsync(DeviceTensor)");
    st.wait();
  }

  void synchronize(const Device& d) override {
    DeviceState& st = state(d);
    std::lock_guard lock(st.mu);
    st.ctx->make_current();
    st.wait();
  }

  void enqueue(const OpCall& call, const std::shared_ptr<DeviceStorage>* keep, std::size_t keep_count) override {
    DeviceState& st = state(call.device);
    std::lock_guard lock(st.mu);
    st.ctx->make_current();
    if (st.keep.size() >= kMaxKept) st.wait();
    st.keep.insert(st.keep.end(), keep, keep + keep_count);
    record(st, call);
  }

 private:
  DeviceState& state(const Device& d) {
    std::lock_guard lock(mu_);
    std::unique_ptr<DeviceState>& p = devices_[d.index];
    if (!p) {
      auto st = std::make_unique<DeviceState>();
      st->ctx = Context::open(d.index);
      p = std::move(st);
    }
    return *p;
  }

  std::mutex mu_;
  std::map<int, std::unique_ptr<DeviceState>> devices_;
};

}  // namespace

detail::DeviceBackend& tensor_backend() {
  static Backend b;
  return b;
}

}  // namespace trueno::cuda
