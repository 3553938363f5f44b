// The WebGPU line of the device report (trueno/device.h). The backend is WGSL shaders driven from
// JavaScript (src/webgpu/js, docs/WEBGPU.md): a page or Node opens the device, and no C++ code of this
// build can, so the line says where it runs instead of "not built".
#include "trueno/device.h"

namespace trueno::webgpu {

std::vector<DeviceStatus> probe_devices() {
  return {{Device{DeviceKind::WebGPU, 0}, false,
           "no WebGPU device from C++: the backend is WGSL shaders driven from JavaScript (src/webgpu/js: in a browser, or in "
           "Node with npm webgpu; docs/WEBGPU.md)"}};
}

}  // namespace trueno::webgpu
