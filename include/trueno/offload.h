// Automatic device choice for ops on host data (today: Matrix::matmul). With nothing forced, an op runs
// on a device only where the crossover table says the device, transfers included, was measured faster
// than the CPU at that size on this machine; the table is measured at first use (or by `realizar backends
// --calibrate`) and cached per machine. Forcing works as for the CPU tiers: per object (Matrix::on(Device),
// or Matrix::on(Backend), which keeps the op on that CPU tier), globally (set_offload) and by environment
// (TRUENO_OFFLOAD). Devices that DeviceStatus::automatic excludes (lavapipe) are never chosen, only forced.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "trueno/device.h"
#include "trueno/device_ops.h"

namespace trueno {

struct Crossover {
  Device device;
  DeviceOp op = DeviceOp::Matmul;
  // Whether automatic choice may send the op there at all (DeviceStatus::automatic, and measured to pay
  // at some size).
  bool automatic = false;
  // Matmul: the smallest measured square size n (n x n times n x n, upload and download included) from
  // which the device was faster than the CPU at every larger measured size; 0: at none.
  std::size_t min_size = 0;
  // The measurements ("n=512: cpu 4.10 ms, device 2.30 ms; ...") or why there are none.
  std::string detail;
};

// One entry per available device, in device_report() order: read from the cache when it holds this
// device (same description), else measured now and written back. Measured once per process.
std::vector<Crossover> crossover_table();
// The entries the cache holds for the available devices, without measuring (nullopt: none cached).
std::vector<std::optional<Crossover>> cached_crossovers();
// Measures every available automatic device now and rewrites the cache.
std::vector<Crossover> calibrate();
// TRUENO_CROSSOVER_CACHE (a file, or "off"), else $XDG_CACHE_HOME/trueno/crossover.tsv, else
// $HOME/.cache/trueno/crossover.tsv; empty when off.
std::string crossover_cache_path();

struct Offload {
  enum class Mode { Auto, Never, Force };
  Mode mode = Mode::Auto;
  Device device;  // Force
  static Offload automatic() { return {}; }
  static Offload never() { return {Mode::Never, {}}; }
  static Offload to(const Device& d) { return {Mode::Force, d}; }
};
// set_offload() if called, else TRUENO_OFFLOAD ("auto", "off", or a device such as "cuda:0"; anything
// else throws InvalidArgument), else automatic.
Offload current_offload();
// A forced device must be available (BackendUnavailable otherwise).
void set_offload(const Offload& o);
void reset_offload();

// Where an op on host data of `size` (matmul: the cube root of m * n * k) runs: a device, or nullopt for
// the CPU. forced: the operands' device; cpu_forced: an operand forced to a CPU tier (the CPU then).
std::optional<Device> choose_device(DeviceOp op, std::size_t size, std::optional<Device> forced = {}, bool cpu_forced = false);

}  // namespace trueno
