// The crossover table (offload.h): measured per device, cached per machine.
//
// Note [Measured crossover]
// Whether a matmul on host data pays on a device depends on the device, its link, the CPU it races and
// the CPU's thread count; no constant fits them all. So nothing is guessed: for each available device
// that automatic choice may use (DeviceStatus::automatic), square products of 128..2048 are timed on the
// CPU (ops::matmul on the current tier) and on the device with the uploads and the download included (a
// host-data op pays them), best of two runs after a warm-up. The crossover is the smallest size from
// which the device won at every larger measured size (0: it never won). Timing stops once a CPU product
// takes over a second. Entries are keyed by the device's description, the CPU tier and the thread count
// (crossover_key); a device whose measurement fails (a driver error, the fake device of the tests) gets an
// entry that says so, is never chosen, and is not cached, so the next process tries again.
#include "api/crossover.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/strings.h"
#include "trueno/device_tensor.h"
#include "trueno/error.h"
#include "trueno/log.h"
#include "trueno/ops.h"
#include "trueno/threads.h"

namespace trueno {
namespace {

template <class F>
double best_ms(F f, int reps) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

namespace detail {

std::string crossover_key(const DeviceStatus& s) {
  const std::string text = strcat(s.detail, '|', name(current_backend()), '|', num_threads());
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<CachedCrossover> read_crossover_cache(const std::string& path) {
  std::vector<CachedCrossover> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cols.push_back(c);
    if (cols.size() != 6 || cols[1] != "matmul" || (cols[2] != "0" && cols[2] != "1")) continue;
    try {
      const std::optional<Device> d = parse_device(cols[0]);
      if (!d) continue;
      CachedCrossover c{{*d, DeviceOp::Matmul, cols[2] == "1", std::stoul(cols[3]), cols[5]}, cols[4]};
      out.push_back(std::move(c));
    } catch (const std::exception&) {
      continue;  // a malformed line: measured again
    }
  }
  return out;
}

bool write_crossover_cache(const std::string& path, const std::vector<CachedCrossover>& entries) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = strcat(path, ".tmp.", getpid());
  {
    std::ofstream f(tmp);
    f << "# trueno crossover table (include/trueno/offload.h; Note [Measured crossover]): device, op, automatic, min_size, key, detail\n";
    for (const CachedCrossover& c : entries) {
      std::string detail = c.entry.detail;
      std::replace_if(detail.begin(), detail.end(), [](char ch) { return ch == '\t' || ch == '\n'; }, ' ');
      f << c.entry.device.str() << '\t' << name(c.entry.op) << '\t' << (c.entry.automatic ? 1 : 0) << '\t' << c.entry.min_size << '\t'
        << c.key << '\t' << detail << '\n';
    }
    if (!f.flush()) {
      log(LogLevel::Warn, strcat("crossover cache: cannot write ", tmp));
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    log(LogLevel::Warn, strcat("crossover cache: cannot rename ", tmp, " to ", path, ": ", ec.message()));
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

Crossover measure_crossover(const DeviceStatus& s, std::span<const std::size_t> sizes) {
  Crossover c{s.device, DeviceOp::Matmul};
  try {
    std::vector<std::pair<std::size_t, bool>> wins;
    for (std::size_t n : sizes) {
      std::vector<float> a(n * n), b(n * n), out(n * n);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.25f, b[i] = static_cast<float>(i % 5) * 0.5f;
      auto cpu = [&] { ops::matmul(n, n, n, a.data(), n, b.data(), n, out.data(), n); };
      auto dev = [&] {
        DeviceTensor dc;
        ops::matmul(DeviceTensor::upload(s.device, a, {n, n}), DeviceTensor::upload(s.device, b, {n, n}), dc);
        dc.download(out);
      };
      dev(), cpu();  // warm-up: context, kernels, thread pool
      const double tc = best_ms(cpu, 2), td = best_ms(dev, 2);
      wins.emplace_back(n, td < tc);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%sn=%zu: cpu %.3f ms, device %.3f ms", c.detail.empty() ? "" : "; ", n, tc, td);
      c.detail += buf;
      if (tc > 1000.0) break;
    }
    for (std::size_t i = wins.size(); i-- > 0 && wins[i].second;) c.min_size = wins[i].first;
    c.automatic = c.min_size != 0;
  } catch (const Error& e) {
    c.automatic = false, c.min_size = 0;
    c.detail = strcat("not measured: ", e.what());
  }
  return c;
}

}  // namespace detail

namespace {

constexpr std::size_t kSizes[] = {128, 256, 512, 1024, 2048};

// Note [Measured crossover].
Crossover measure(const DeviceStatus& s) {
  if (!s.automatic) return {s.device, DeviceOp::Matmul, false, 0, "never chosen automatically (forced only): " + s.detail};
  return detail::measure_crossover(s, kSizes);
}

std::vector<DeviceStatus> available_statuses() {
  std::vector<DeviceStatus> v;
  for (const DeviceStatus& s : device_report())
    if (s.available) v.push_back(s);
  return v;
}

// Measures the statuses whose cached entry is missing or stale, writes the cache when anything new was
// measured (failed measurements are not cached), returns the table in statuses' order.
std::vector<Crossover> build(bool remeasure) {
  const std::string path = crossover_cache_path();
  std::vector<detail::CachedCrossover> cache = path.empty() ? std::vector<detail::CachedCrossover>{} : detail::read_crossover_cache(path);
  std::vector<Crossover> table;
  bool changed = false;
  for (const DeviceStatus& s : available_statuses()) {
    const std::string key = detail::crossover_key(s);
    auto it = std::find_if(cache.begin(), cache.end(), [&](const auto& c) { return c.entry.device == s.device && c.key == key; });
    if (it != cache.end() && !remeasure && s.automatic) {
      table.push_back(it->entry);
      continue;
    }
    const Crossover c = measure(s);
    table.push_back(c);
    if (!s.automatic || c.detail.starts_with("not measured")) continue;
    std::erase_if(cache, [&](const auto& e) { return e.entry.device == s.device; });
    cache.push_back({c, key});
    changed = true;
    log(LogLevel::Info, strcat("crossover of matmul on ", s.device.str(), ": ", c.min_size ? strcat("n >= ", c.min_size) : "never", " (", c.detail, ")"));
  }
  if (changed && !path.empty()) detail::write_crossover_cache(path, cache);
  return table;
}

std::mutex table_mu;
std::optional<std::vector<Crossover>> table_once;

}  // namespace

std::string crossover_cache_path() {
  if (const char* c = std::getenv("TRUENO_CROSSOVER_CACHE"); c != nullptr && *c != '\0')
    return std::string_view(c) == "off" ? std::string{} : std::string(c);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return strcat(x, "/trueno/crossover.tsv");
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return strcat(h, "/.cache/trueno/crossover.tsv");
  return {};
}

std::vector<Crossover> crossover_table() {
  std::lock_guard lock(table_mu);
  if (!table_once) table_once = build(false);
  return *table_once;
}

std::vector<Crossover> calibrate() {
  std::lock_guard lock(table_mu);
  table_once = build(true);
  return *table_once;
}

std::vector<std::optional<Crossover>> cached_crossovers() {
  const std::string path = crossover_cache_path();
  const std::vector<detail::CachedCrossover> cache = path.empty() ? std::vector<detail::CachedCrossover>{} : detail::read_crossover_cache(path);
  std::vector<std::optional<Crossover>> out;
  for (const DeviceStatus& s : available_statuses()) {
    const std::string key = detail::crossover_key(s);
    auto it = std::find_if(cache.begin(), cache.end(), [&](const auto& c) { return c.entry.device == s.device && c.key == key; });
    if (!s.automatic) out.push_back(Crossover{s.device, DeviceOp::Matmul, false, 0, "never chosen automatically (forced only): " + s.detail});
    else if (it != cache.end()) out.push_back(it->entry);
    else out.push_back(std::nullopt);
  }
  return out;
}

}  // namespace trueno
