// The Vulkan line(s) of the device report (trueno/device.h): one per physical device, or why there is none.
#include "trueno/device.h"
#include "trueno/vulkan/context.h"

namespace trueno::vulkan {

VulkanStatus status(int index) {
  std::string why;
  const auto info = probe(index, &why);
  if (!info) return {false, false, why};
  VulkanStatus s{true, !info->cpu, info->describe()};
  if (info->cpu) s.text += "; cpu device: never chosen automatically (--backend vulkan:" + std::to_string(index) + " forces it)";
  return s;
}

std::vector<DeviceStatus> probe_devices() {
  std::string why;
  const int n = device_count(&why);
  if (n == 0) return {{Device{DeviceKind::Vulkan, 0}, false, why}};
  std::vector<DeviceStatus> out;
  for (int i = 0; i < n; ++i) {
    const VulkanStatus s = status(i);
    DeviceStatus d{Device{DeviceKind::Vulkan, i}, s.available, s.text};
    d.automatic = s.automatic;
    out.push_back(d);
  }
  return out;
}

}  // namespace trueno::vulkan
