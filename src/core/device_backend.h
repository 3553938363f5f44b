// What a device backend (src/<folder>/, device_kinds.inc) implements for the public device tensors and
// ops (include/trueno/device_tensor.h, device_ops.h): memory, copies, one enqueue entry for every op of
// the list, and a wait. The core calls it through this interface and never includes a backend's headers.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "trueno/device_ops.h"
#include "trueno/device_tensor.h"
#include "trueno/grad.h"

namespace trueno::detail {

// Device memory of one tensor; a backend derives its own (holding its buffer and its context).
struct DeviceStorage {
  DeviceStorage(Device d, std::size_t b) : device(d), bytes(b) {}
  virtual ~DeviceStorage() = default;
  Device device;
  std::size_t bytes;
};

// One op as the core hands it to a backend, checked: every storage is on the backend's device `device`,
// shapes fit (src/api/device_ops.cpp).
//   Binary/Unary: in[0] (, in[1]) and out of n f32; alpha for Scale.
//   Reduce:       in[0] (, in[1] for Dot) of n f32 (n >= 1 but for Sum, Dot); out one f32 (Argmax, Argmin:
//                 one i32, n < 2^31).
//   Rows:         in[0] rows x n; in[1] the weight, in[2] the bias (n each); eps. AddBias: in[1] the bias.
//   Matmul, MatmulBackward: out[m][n] = op(in[0]) op(in[1]) + beta * out, op(X) = X^T where trans_a /
//                 trans_b (in[0] then stored k x m, in[1] n x k); Matmul has no transposes and beta 0.
//   Matvec:       in[0] m x k of type `type`, in[1] k f32, out m f32.
//   Convert:      in[0] and out n elements.
//   RmsnormBackward, LayernormBackward: in[0] x [m][n], in[1] w [n], in[2] dy [m][n]; out dx, out2 dw [n],
//                 out3 db [n] (layernorm); eps; dw, db overwritten (beta 0) or accumulated (beta 1).
//   CrossEntropy: in[0] logits [m][n], in[1] targets (i32) [m]; out dlogits = alpha (softmax - onehot),
//                 out2 the loss of each row [m].
//   RopeBackward: in[0] dy [m][n heads of k values], row r at position pos + r; out dx; rope_dim, base, neox.
//   EmbeddingBackward: in[0] ids (i32) [m], in[1] dy [m][n]; out the table gradient [k][n], beta as above.
//   BiasBackward: in[0] dy [m][n]; out db [n], the column sums, beta as above.
//   AttentionBackward: the one kernel of its own, the causal softmax: in[0] S [m][m]; out P, row t =
//                 softmax(alpha * S[t][0..t]), zeros after (the rest are other ops' calls, device_grad.cpp).
//   AdamwStep:    in[0] g [n]; out w, out2 m, out3 v updated in place; adamw, bias1 = 1 - beta1^t, bias2.
struct OpCall {
  DeviceOp op;
  Device device;
  const DeviceStorage* in[3] = {nullptr, nullptr, nullptr};
  DeviceStorage* out = nullptr;
  QuantType type = QuantType::F32;  // of in[0]
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 0.0f, eps = 0.0f;
  bool trans_a = false, trans_b = false;
  float beta = 0.0f;
  DeviceStorage* out2 = nullptr;  // the further outputs of the backward ops (layouts above)
  DeviceStorage* out3 = nullptr;
  std::size_t pos = 0, rope_dim = 0;  // RopeBackward
  float base = 0.0f;
  bool neox = false;
  grad::AdamW adamw{};  // AdamwStep
  float bias1 = 1.0f, bias2 = 1.0f;
};

// Note [Device op list]
// include/trueno/device_ops.inc is the one list of public device ops. A backend answers missing() for
// each (the empty string when it has a kernel, else why not, which the "no kernel" error quotes) and
// enqueue() for the ones it has. Ops are asynchronous: enqueue() records or launches and returns; storages
// an enqueued op reads or writes, and any scratch it needs, are kept alive by the backend until the next
// synchronize() of that device, so a tensor dropped right after an op is safe. read() and write() wait
// for the device's queued work first (write() could otherwise overwrite what a queued op still reads).
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // "" when the backend has a kernel for op with in[0] of `type`; else the reason, e.g. "q8_k weights are
  // an activation format".
  virtual std::string missing(DeviceOp op, QuantType type) const = 0;
  // Throws BackendUnavailable naming the device when it cannot be opened.
  virtual std::shared_ptr<DeviceStorage> allocate(const Device& d, std::size_t bytes) = 0;
  virtual void write(DeviceStorage& s, const void* src, std::size_t bytes) = 0;
  virtual void read(const DeviceStorage& s, void* dst, std::size_t bytes) = 0;
  virtual void enqueue(const OpCall& call, const std::shared_ptr<DeviceStorage>* keep, std::size_t keep_count) = 0;
  virtual void synchronize(const Device& d) = 0;
};

// The backend of d's kind; BackendUnavailable naming the kind when this build has none.
DeviceBackend& device_backend(DeviceKind kind);
// Whether this build has a backend for the kind (device_kinds.inc and the CMake option).
DeviceBackend* find_device_backend(DeviceKind kind);

// Lets the core (and tests) reach a tensor's storage and build tensors from a storage.
struct DeviceTensorAccess {
  static const std::shared_ptr<DeviceStorage>& storage(const DeviceTensor& t) { return t.storage_; }
  static DeviceTensor make(std::shared_ptr<DeviceStorage> s, Shape shape, QuantType type) {
    DeviceTensor t;
    t.storage_ = std::move(s);
    t.shape_ = std::move(shape);
    t.type_ = type;
    return t;
  }
};

}  // namespace trueno::detail
