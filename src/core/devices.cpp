// Device kinds, names, detection over the backend list (device.h).
#include "trueno/device.h"

#include <charconv>
#include <cstdlib>

#include "core/strings.h"
#include "trueno/error.h"

// Each built backend's folder defines trueno::<folder>::probe_devices(); the generated list names the
// built ones (cmake/TruenoBackends.cmake), so a backend that is OFF leaves no reference behind.
#define TRUENO_BUILT_BACKEND(Enum, folder) \
  namespace trueno::folder {               \
  std::vector<DeviceStatus> probe_devices(); \
  }
#include "trueno_built_backends.inc"
#undef TRUENO_BUILT_BACKEND

namespace trueno {
namespace {

struct KindInfo {
  DeviceKind kind;
  std::string_view name, option;
};

constexpr KindInfo kKinds[] = {
#define TRUENO_DEVICE_KIND(Enum, name, option, folder) {DeviceKind::Enum, name, #option},
#include "trueno/device_kinds.inc"
#undef TRUENO_DEVICE_KIND
};

const KindInfo& info(DeviceKind k) { return kKinds[static_cast<int>(k)]; }

std::vector<DeviceStatus> probe(DeviceKind k) {
  switch (k) {
#define TRUENO_BUILT_BACKEND(Enum, folder) \
  case DeviceKind::Enum:                   \
    return folder::probe_devices();
#include "trueno_built_backends.inc"
#undef TRUENO_BUILT_BACKEND
    default:
      return {{Device{k, 0}, false, strcat("not built (", info(k).option, "=OFF, or this build has no ", info(k).name, " backend yet)")}};
  }
}

// Note [Fake device] (device.h).
std::optional<DeviceKind> fake_kind() {
  const char* e = std::getenv("TRUENO_FAKE_DEVICE");
  if (e == nullptr || *e == '\0') return std::nullopt;
  const auto d = parse_device(e);
  if (!d) throw InvalidArgument(strcat("TRUENO_FAKE_DEVICE=", e, ": not a device kind"));
  return d->kind;
}

const std::vector<DeviceStatus>& report() {
  static const std::vector<DeviceStatus> r = [] {
    const std::optional<DeviceKind> fake = fake_kind();
    std::vector<DeviceStatus> v;
    for (const KindInfo& k : kKinds) {
      std::vector<DeviceStatus> found = probe(k.kind);
      if (fake == k.kind) {
        std::erase_if(found, [](const DeviceStatus& s) { return !s.available; });
        found.push_back({Device{k.kind, static_cast<int>(found.size())}, true, "fake device for tests (TRUENO_FAKE_DEVICE)"});
      }
      v.insert(v.end(), found.begin(), found.end());
    }
    return v;
  }();
  return r;
}

}  // namespace

std::string_view name(DeviceKind k) { return info(k).name; }

bool built(DeviceKind k) {
  switch (k) {
#define TRUENO_BUILT_BACKEND(Enum, folder) \
  case DeviceKind::Enum:                   \
    return true;
#include "trueno_built_backends.inc"
#undef TRUENO_BUILT_BACKEND
    default:
      return false;
  }
}

std::string Device::str() const { return strcat(name(kind), ':', index); }

std::optional<Device> parse_device(std::string_view text) {
  const std::string lower = to_lower(text);
  const std::string_view s = lower;
  const std::size_t colon = s.find(':');
  const std::string_view kind = s.substr(0, colon);
  for (const KindInfo& k : kKinds) {
    if (kind != k.name) continue;
    Device d{k.kind, 0};
    if (colon == std::string_view::npos) return d;
    const std::string_view idx = s.substr(colon + 1);
    const auto [end, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), d.index);
    if (idx.empty() || ec != std::errc{} || end != idx.data() + idx.size() || d.index < 0)
      throw InvalidArgument(strcat("device '", text, "': the index after ':' must be a number >= 0 (e.g. ", k.name, ":1)"));
    return d;
  }
  return std::nullopt;
}

std::vector<DeviceStatus> device_report() { return report(); }

std::vector<Device> available_devices() {
  std::vector<Device> v;
  for (const auto& s : report())
    if (s.available) v.push_back(s.device);
  return v;
}

bool is_available(const Device& d) {
  for (const auto& s : report())
    if (s.device == d) return s.available;
  return false;
}

void require_available(const Device& d) {
  std::string why, found;
  for (const auto& s : report()) {
    if (s.device.kind != d.kind) continue;
    if (s.device == d) {
      if (s.available) return;
      why = s.detail;
    }
    if (s.available) found += (found.empty() ? "" : ", ") + s.device.str();
  }
  if (why.empty())
    why = found.empty() ? strcat("no ", name(d.kind), " device") : strcat("no such device (this machine has ", found, ")");
  throw BackendUnavailable(strcat("device ", d.str(), " is not available: ", why));
}

}  // namespace trueno
