// trueno::DeviceTensor: a tensor that lives in a device's memory (device.h: "cuda:0", "vulkan:0").
// Data moves only when asked: upload() makes one from host values, download() brings it back; the ops of
// device_ops.h read and write device memory and never copy to the host. Ops are enqueued on the device
// and return at once; the one synchronization point the user sees is download() (which waits for the
// device's queued work) or synchronize(device). Errors are trueno's (error.h): an empty tensor where a
// device tensor is needed, operands on two devices, an op without a kernel on the device, all by name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trueno/device.h"
#include "trueno/quant.h"

namespace trueno {

namespace detail {
struct DeviceStorage;
struct DeviceTensorAccess;
}  // namespace detail

class Matrix;
class Vector;

// Dimensions, outermost first: {rows, cols} for a matrix, {n} for a vector.
using Shape = std::vector<std::size_t>;

class DeviceTensor {
 public:
  // Empty: on no device, no memory. Passing it to an op as an input throws InvalidArgument; as an
  // output it is allocated on the inputs' device.
  DeviceTensor() = default;

  // Uninitialized memory for `shape` elements of `type` on d (quantized types: shape {rows, cols}, cols
  // a whole number of the format's blocks). Throws BackendUnavailable when d cannot run.
  static DeviceTensor empty(const Device& d, Shape shape, QuantType type = QuantType::F32);
  // f32 values (shape's product == values.size(); an empty shape means {values.size()}).
  static DeviceTensor upload(const Device& d, std::span<const float> values, Shape shape = {});
  static DeviceTensor upload(const Device& d, const Matrix& m);
  static DeviceTensor upload(const Device& d, const Vector& v);
  // f16 bits.
  static DeviceTensor upload_f16(const Device& d, std::span<const std::uint16_t> bits, Shape shape = {});
  // bf16 bits (the top half of an f32).
  static DeviceTensor upload_bf16(const Device& d, std::span<const std::uint16_t> bits, Shape shape = {});
  // i32 values: token ids (grad::embedding) and class targets (grad::cross_entropy).
  static DeviceTensor upload_ids(const Device& d, std::span<const std::int32_t> ids, Shape shape = {});
  // rows x cols weights of `type` in the GGUF layout (quant_row_bytes(type, cols) bytes per row).
  static DeviceTensor upload_quantized(const Device& d, QuantType type, std::span<const std::byte> bytes, std::size_t rows,
                                       std::size_t cols);

  // Waits for the device's queued work, then copies. out.size() must equal size() (ShapeError).
  void download(std::span<float> out) const;  // f32 tensors
  std::vector<float> download() const;
  void download_f16(std::span<std::uint16_t> out) const;  // f16 tensors
  void download_bf16(std::span<std::uint16_t> out) const;  // bf16 tensors
  void download_ids(std::span<std::int32_t> out) const;   // i32 tensors (ops::argmax, argmin)
  // Overwrites the contents from the host (waits for queued work that may still read the old contents).
  void write(std::span<const float> values);
  // An explicit copy on another device (through the host).
  DeviceTensor to(const Device& d) const;

  bool empty() const { return storage_ == nullptr; }
  // The device it lives on; InvalidArgument for an empty tensor.
  const Device& device() const;
  const Shape& shape() const { return shape_; }
  QuantType type() const { return type_; }
  std::size_t size() const;  // elements
  std::size_t bytes() const;
  // The last dimension, and the product of the others (1 for a vector).
  std::size_t cols() const { return shape_.empty() ? 0 : shape_.back(); }
  std::size_t rows() const { return cols() == 0 ? 0 : size() / cols(); }

 private:
  friend struct detail::DeviceTensorAccess;
  std::shared_ptr<detail::DeviceStorage> storage_;
  Shape shape_;
  QuantType type_ = QuantType::F32;
};

// Waits until every op queued on d so far has completed (a no-op when nothing is queued).
void synchronize(const Device& d);

}  // namespace trueno
