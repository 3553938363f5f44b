// The offload policy and the choice of a device for an op on host data (offload.h).
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "core/strings.h"
#include "trueno/error.h"
#include "trueno/offload.h"

namespace trueno {
namespace {

std::mutex mu;
std::optional<Offload> set_value;

Offload from_env() {
  const char* e = std::getenv("TRUENO_OFFLOAD");
  if (e == nullptr || *e == '\0' || std::string_view(e) == "auto") return Offload::automatic();
  if (std::string_view(e) == "off") return Offload::never();
  const std::optional<Device> d = parse_device(e);
  if (!d) throw InvalidArgument(strcat("TRUENO_OFFLOAD=", e, ": use auto, off, or a device such as cuda:0 or vulkan:0"));
  require_available(*d);
  return Offload::to(*d);
}

bool any_automatic_device() {
  for (const DeviceStatus& s : device_report())
    if (s.available && s.automatic) return true;
  return false;
}

}  // namespace

Offload current_offload() {
  std::lock_guard lock(mu);
  return set_value ? *set_value : from_env();
}

void set_offload(const Offload& o) {
  if (o.mode == Offload::Mode::Force) require_available(o.device);
  std::lock_guard lock(mu);
  set_value = o;
}

void reset_offload() {
  std::lock_guard lock(mu);
  set_value.reset();
}

std::optional<Device> choose_device(DeviceOp op, std::size_t size, std::optional<Device> forced, bool cpu_forced) {
  if (forced) {
    require_available(*forced);
    return forced;
  }
  if (cpu_forced) return std::nullopt;
  const Offload o = current_offload();
  if (o.mode == Offload::Mode::Never) return std::nullopt;
  if (o.mode == Offload::Mode::Force) return o.device;
  // Automatic: only an op the table measures, and only when some device may be chosen at all (no
  // measurement is ever started on a machine without one, e.g. CI with lavapipe).
  if (op != DeviceOp::Matmul || !any_automatic_device()) return std::nullopt;
  for (const Crossover& c : crossover_table())
    if (c.automatic && c.op == op && c.min_size != 0 && size >= c.min_size) return c.device;
  return std::nullopt;
}

}  // namespace trueno
