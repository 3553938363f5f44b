// DeviceTensor (device_tensor.h): sizes and checks here, memory and copies in the device's backend
// (src/core/device_backend.h), found through the generated list of built backends.
#include "trueno/device_tensor.h"

#include <numeric>

#include "core/device_backend.h"
#include "core/strings.h"
#include "trueno/error.h"
#include "trueno/matrix.h"
#include "trueno/vector.h"

// Each built backend's folder defines trueno::<folder>::tensor_backend() (Note [Backend list]).
#define TRUENO_BUILT_BACKEND(Enum, folder) \
  namespace trueno::folder {               \
  detail::DeviceBackend& tensor_backend(); \
  }
#include "trueno_built_backends.inc"
#undef TRUENO_BUILT_BACKEND

namespace trueno {
namespace detail {

DeviceBackend* find_device_backend(DeviceKind kind) {
  switch (kind) {
#define TRUENO_BUILT_BACKEND(Enum, folder) \
  case DeviceKind::Enum:                   \
    return &folder::tensor_backend();
#include "trueno_built_backends.inc"
#undef TRUENO_BUILT_BACKEND
    default:
      return nullptr;
  }
}

DeviceBackend& device_backend(DeviceKind kind) {
  DeviceBackend* b = find_device_backend(kind);
  if (b == nullptr)
    throw BackendUnavailable(strcat("device kind ", name(kind), ": this build has no ", name(kind),
                                    " backend (its CMake option is OFF or its dependencies were not found)"));
  return *b;
}

}  // namespace detail

namespace {

std::size_t product(const Shape& s) { return std::accumulate(s.begin(), s.end(), std::size_t{1}, std::multiplies<>()); }

std::size_t bytes_of(const Shape& shape, QuantType type) {
  if (shape.empty()) return 0;
  const std::size_t cols = shape.back(), rows = cols == 0 ? 0 : product(shape) / cols;
  return rows * quant_row_bytes(type, cols);  // ShapeError when cols is not whole blocks
}

DeviceTensor make(const Device& d, Shape shape, QuantType type) {
  require_available(d);
  const std::size_t bytes = bytes_of(shape, type);
  auto storage = detail::device_backend(d.kind).allocate(d, bytes);
  return detail::DeviceTensorAccess::make(std::move(storage), std::move(shape), type);
}

Shape shape_or(Shape shape, std::size_t n, const char* what) {
  if (shape.empty()) return {n};
  if (product(shape) != n)
    throw ShapeError(strcat("DeviceTensor::", what, ": ", n, " values do not fill the shape (", product(shape), " elements)"));
  return shape;
}

void need_type(const DeviceTensor& t, QuantType type, const char* what) {
  if (t.type() != type)
    throw InvalidArgument(strcat("DeviceTensor::", what, ": the tensor holds ", quant_info(t.type()).name, ", not ",
                                 quant_info(type).name));
}

}  // namespace

DeviceTensor DeviceTensor::empty(const Device& d, Shape shape, QuantType type) { return make(d, std::move(shape), type); }

DeviceTensor DeviceTensor::upload(const Device& d, std::span<const float> values, Shape shape) {
  DeviceTensor t = make(d, shape_or(std::move(shape), values.size(), "upload"), QuantType::F32);
  if (!values.empty()) detail::device_backend(d.kind).write(*t.storage_, values.data(), values.size_bytes());
  return t;
}

DeviceTensor DeviceTensor::upload(const Device& d, const Matrix& m) {
  return upload(d, std::span<const float>(m.data(), m.rows() * m.cols()), {m.rows(), m.cols()});
}

DeviceTensor DeviceTensor::upload(const Device& d, const Vector& v) { return upload(d, v.span()); }

DeviceTensor DeviceTensor::upload_f16(const Device& d, std::span<const std::uint16_t> bits, Shape shape) {
  DeviceTensor t = make(d, shape_or(std::move(shape), bits.size(), "upload_f16"), QuantType::F16);
  if (!bits.empty()) detail::device_backend(d.kind).write(*t.storage_, bits.data(), bits.size_bytes());
  return t;
}

DeviceTensor DeviceTensor::upload_bf16(const Device& d, std::span<const std::uint16_t> bits, Shape shape) {
  DeviceTensor t = make(d, shape_or(std::move(shape), bits.size(), "upload_bf16"), QuantType::BF16);
  if (!bits.empty()) detail::device_backend(d.kind).write(*t.storage_, bits.data(), bits.size_bytes());
  return t;
}

DeviceTensor DeviceTensor::upload_ids(const Device& d, std::span<const std::int32_t> ids, Shape shape) {
  DeviceTensor t = make(d, shape_or(std::move(shape), ids.size(), "upload_ids"), QuantType::I32);
  if (!ids.empty()) detail::device_backend(d.kind).write(*t.storage_, ids.data(), ids.size_bytes());
  return t;
}

DeviceTensor DeviceTensor::upload_quantized(const Device& d, QuantType type, std::span<const std::byte> bytes, std::size_t rows,
                                            std::size_t cols) {
  const std::size_t need = rows * quant_row_bytes(type, cols);
  if (bytes.size() != need)
    throw ShapeError(strcat("DeviceTensor::upload_quantized: ", rows, " rows of ", cols, " ", quant_info(type).name, " weights are ",
                            need, " bytes, got ", bytes.size()));
  DeviceTensor t = make(d, {rows, cols}, type);
  if (need != 0) detail::device_backend(d.kind).write(*t.storage_, bytes.data(), need);
  return t;
}

const Device& DeviceTensor::device() const {
  if (!storage_) throw InvalidArgument("DeviceTensor: an empty tensor is on no device (make one with upload or empty)");
  return storage_->device;
}

std::size_t DeviceTensor::size() const { return shape_.empty() ? 0 : product(shape_); }
std::size_t DeviceTensor::bytes() const { return storage_ ? storage_->bytes : 0; }

void DeviceTensor::download(std::span<float> out) const {
  need_type(*this, QuantType::F32, "download");
  if (out.size() != size()) throw ShapeError(strcat("DeviceTensor::download: out has ", out.size(), " elements, the tensor ", size()));
  if (!out.empty()) detail::device_backend(device().kind).read(*storage_, out.data(), out.size_bytes());
}

std::vector<float> DeviceTensor::download() const {
  std::vector<float> v(size());
  download(v);
  return v;
}

void DeviceTensor::download_f16(std::span<std::uint16_t> out) const {
  need_type(*this, QuantType::F16, "download_f16");
  if (out.size() != size()) throw ShapeError(strcat("DeviceTensor::download_f16: out has ", out.size(), " elements, the tensor ", size()));
  if (!out.empty()) detail::device_backend(device().kind).read(*storage_, out.data(), out.size_bytes());
}

void DeviceTensor::download_bf16(std::span<std::uint16_t> out) const {
  need_type(*this, QuantType::BF16, "download_bf16");
  if (out.size() != size()) throw ShapeError(strcat("DeviceTensor::download_bf16: out has ", out.size(), " elements, the tensor ", size()));
  if (!out.empty()) detail::device_backend(device().kind).read(*storage_, out.data(), out.size_bytes());
}

void DeviceTensor::download_ids(std::span<std::int32_t> out) const {
  need_type(*this, QuantType::I32, "download_ids");
  if (out.size() != size()) throw ShapeError(strcat("DeviceTensor::download_ids: out has ", out.size(), " elements, the tensor ", size()));
  if (!out.empty()) detail::device_backend(device().kind).read(*storage_, out.data(), out.size_bytes());
}

void DeviceTensor::write(std::span<const float> values) {
  need_type(*this, QuantType::F32, "write");
  if (values.size() != size()) throw ShapeError(strcat("DeviceTensor::write: ", values.size(), " values for a tensor of ", size()));
  if (!values.empty()) detail::device_backend(device().kind).write(*storage_, values.data(), values.size_bytes());
}

DeviceTensor DeviceTensor::to(const Device& d) const {
  std::vector<std::byte> host(bytes());
  if (!host.empty()) detail::device_backend(device().kind).read(*storage_, host.data(), host.size());
  DeviceTensor t = make(d, shape_, type_);
  if (!host.empty()) detail::device_backend(d.kind).write(*t.storage_, host.data(), host.size());
  return t;
}

void synchronize(const Device& d) {
  if (detail::DeviceBackend* b = detail::find_device_backend(d.kind)) b->synchronize(d);
}

}  // namespace trueno
