// The CUDA line(s) of the device report (trueno/device.h): one per device, or why there is none.
#include "trueno/cuda/context.h"
#include "trueno/device.h"

namespace trueno::cuda {

std::vector<DeviceStatus> probe_devices() {
  std::string why;
  const int n = device_count(&why);
  if (n == 0) return {{Device{DeviceKind::CUDA, 0}, false, why}};
  std::vector<DeviceStatus> out;
  for (int i = 0; i < n; ++i) {
    const CudaStatus s = status(i);
    out.push_back({Device{DeviceKind::CUDA, i}, s.available, s.text});
  }
  return out;
}

}  // namespace trueno::cuda
