// Devices: GPUs and other accelerators, an idea apart from the CPU's ISA tiers (backend.h). A device is
// a kind from the backend list (device_kinds.inc) and an index: "cuda:0", "cuda:1", "vulkan:0".
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trueno {

enum class DeviceKind {
#define TRUENO_DEVICE_KIND(Enum, name, option, folder) Enum,
#include "trueno/device_kinds.inc"
#undef TRUENO_DEVICE_KIND
};

inline constexpr DeviceKind kAllDeviceKinds[] = {
#define TRUENO_DEVICE_KIND(Enum, name, option, folder) DeviceKind::Enum,
#include "trueno/device_kinds.inc"
#undef TRUENO_DEVICE_KIND
};

// "cuda", "vulkan", "webgpu".
std::string_view name(DeviceKind k);
// Whether this build has the kind's code (its CMake option was not OFF).
bool built(DeviceKind k);

struct Device {
  DeviceKind kind = DeviceKind::CUDA;
  int index = 0;
  friend bool operator==(const Device&, const Device&) = default;
  std::string str() const;  // "cuda:0"
};

// "cuda" (index 0) or "cuda:1", case-insensitive. nullopt when the text names no device kind (a CPU tier,
// say); InvalidArgument when it names one with a malformed index ("cuda:x", "cuda:-1").
std::optional<Device> parse_device(std::string_view text);

struct DeviceStatus {
  Device device;
  bool available = false;
  // What it is ("NVIDIA H200 (sm_90, ...), driver 13.0, kernels: NVRTC 13.0"), or why it cannot be used
  // ("not built (TRUENO_CUDA=OFF)", "no NVIDIA driver: libcuda.so.1: cannot open ...").
  std::string detail;
  // Whether automatic selection (the parity gate's candidates) may pick it. False for devices that can
  // run but should only be used when asked for by name: a Vulkan CPU implementation (lavapipe) is slower
  // than trueno's own CPU kernels ("cpu device: never chosen automatically").
  bool automatic = true;
};

// Every kind in the list, in list order: one line per device found, or one unavailable line (index 0)
// with the reason when the kind has none. Probed once per process.
std::vector<DeviceStatus> device_report();
// The devices that can run now, in list order.
std::vector<Device> available_devices();
bool is_available(const Device& d);
// Throws BackendUnavailable naming the device and why it cannot be used.
void require_available(const Device& d);

// Note [Fake device]
// TRUENO_FAKE_DEVICE=<kind> (e.g. "cuda") adds one available device of that kind to the report, described
// as fake, with no code behind it. Tests run once with it (tests/CMakeLists.txt) so that a test which
// silently assumes "no GPU here" fails on a machine without one, not first on a user's.

}  // namespace trueno
