// DeviceTensor on the WebGPU kind from C++ (src/core/device_backend.h): none. The backend's code is WGSL
// driven from JavaScript (devices.cpp), so no C++ op has a kernel here and no storage can be made; the
// device report already says the device is unavailable, which DeviceTensor checks first.
#include "core/device_backend.h"
#include "trueno/error.h"

namespace trueno::webgpu {
namespace {

constexpr const char* kWhy = "WebGPU runs from JavaScript (src/webgpu/js, docs/WEBGPU.md), not from C++";

class NoTensors final : public detail::DeviceBackend {
 public:
  std::string missing(DeviceOp, QuantType) const override { return kWhy; }
  std::shared_ptr<detail::DeviceStorage> allocate(const Device& d, std::size_t) override {
    throw BackendUnavailable(d.str() + ": " + kWhy);
  }
  void write(detail::DeviceStorage&, const void*, std::size_t) override { throw BackendUnavailable(kWhy); }
  void read(const detail::DeviceStorage&, void*, std::size_t) override { throw BackendUnavailable(kWhy); }
  void enqueue(const detail::OpCall&, const std::shared_ptr<detail::DeviceStorage>*, std::size_t) override { throw BackendUnavailable(kWhy); }
  void synchronize(const Device&) override {}
};

}  // namespace

detail::DeviceBackend& tensor_backend() {
  static NoTensors b;
  return b;
}

}  // namespace trueno::webgpu
