// The crossover cache file (offload.h), apart from measuring, so that tests can check its round trip.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "trueno/offload.h"

namespace trueno::detail {

// A cached entry and the machine key it was measured under (crossover_key).
struct CachedCrossover {
  Crossover entry;
  std::string key;
};

// What a measurement depends on: the device's description (hardware, driver), the CPU tier and thread
// count it was raced against. A cached entry with another key is measured again.
std::string crossover_key(const DeviceStatus& s);

// Times square products of each size on the CPU and on s.device (uploads and download included) and
// returns the entry (Note [Measured crossover]), whether or not s is automatic (the caller decides; tests
// measure lavapipe this way). Failures give an entry whose detail starts "not measured: ".
Crossover measure_crossover(const DeviceStatus& s, std::span<const std::size_t> sizes);

// Lines "device<TAB>op<TAB>automatic<TAB>min_size<TAB>key<TAB>detail" after a comment line. A missing or
// malformed file reads as empty (it is then measured and rewritten).
std::vector<CachedCrossover> read_crossover_cache(const std::string& path);
// Writes to a temporary name in the same folder and renames it into place (a reader never sees half a
// file); creates the folder. Returns false (and logs why) when it cannot.
bool write_crossover_cache(const std::string& path, const std::vector<CachedCrossover>& entries);

}  // namespace trueno::detail
