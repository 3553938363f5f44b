// `realizar backends`: every CPU tier and every device of the backend list, available or not (with the
// reason), the selected CPU tier, the devices realizar can run a model on, and trueno's crossover table
// for ops on host data (trueno/offload.h; --calibrate measures it again).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "realizar/model.h"
#include "trueno/comm.h"
#include "trueno/device.h"
#include "trueno/trueno.h"

namespace realizar::cli {
namespace {

struct BackendsOptions {
  std::string backend;
  bool calibrate = false;
};

// The crossover table as cached (or measured now with --calibrate): where Matrix::matmul on host data
// may run when nothing forces it.
void print_crossovers(bool calibrate) {
  std::printf("\n%-10s %-8s %-22s %s\n", "device", "op", "automatic", "measured");
  std::vector<std::optional<trueno::Crossover>> rows;
  if (calibrate) {
    for (const auto& c : trueno::calibrate()) rows.emplace_back(c);
  } else {
    rows = trueno::cached_crossovers();
  }
  std::size_t i = 0;
  for (const auto& s : trueno::device_report()) {
    if (!s.available) continue;
    if (i >= rows.size()) break;
    const auto& c = rows[i++];
    if (!c) {
      std::printf("%-10s %-8s %-22s %s\n", s.device.str().c_str(), "matmul", "not measured yet",
                  "measured at the first Matrix::matmul that could use it, or now with --calibrate");
      continue;
    }
    const std::string when = c->automatic ? "from n >= " + std::to_string(c->min_size) : "never";
    std::printf("%-10s %-8s %-22s %s\n", c->device.str().c_str(), std::string(trueno::name(c->op)).c_str(), when.c_str(), c->detail.c_str());
  }
  const std::string path = trueno::crossover_cache_path();
  std::printf("crossover cache: %s\n", path.empty() ? "off (TRUENO_CROSSOVER_CACHE=off)" : path.c_str());
}

int run_backends(const BackendsOptions& opt) {
  std::printf("%-10s %-12s %s\n", "cpu tier", "status", "detail");
  for (const auto& s : trueno::backend_report())
    std::printf("%-10s %-12s %s\n", std::string(trueno::name(s.backend)).c_str(),
                s.available ? "available" : "unavailable", s.reason.c_str());
  std::printf("\n%-10s %-12s %s\n", "device", "status", "detail");
  for (const auto& s : trueno::device_report()) {
    std::string detail = s.detail;
    if (s.available && !has_forward(s.device.kind)) detail += " (realizar has no forward pass for it yet)";
    std::printf("%-10s %-12s %s\n", s.device.str().c_str(), s.available ? "available" : "unavailable", detail.c_str());
  }
  // Tensor parallelism across GPUs needs NCCL (docs/MULTI_GPU.md); the CPU's loopback ranks need nothing.
  const trueno::CollectiveStatus nccl = trueno::multi_device_status();
  std::printf("%-10s %-12s %s\n", "nccl", nccl.available ? "available" : "unavailable", nccl.detail.c_str());
  std::printf("\n");
  trueno::Backend selected;
  std::string why;
  if (!opt.backend.empty()) {
    if (const auto d = trueno::parse_device(opt.backend)) {
      trueno::require_available(*d);
      std::printf("device %s: available (forced by --backend; the parity gate still runs unless --no-parity-gate)\n", d->str().c_str());
      return 0;
    }
    selected = trueno::parse_backend(opt.backend);
    trueno::require_available(selected);
    why = "forced by --backend";
  } else {
    const char* env = std::getenv("TRUENO_BACKEND");
    selected = trueno::current_backend();  // throws, naming the feature, if TRUENO_BACKEND cannot run here
    why = env && *env ? std::string("forced by TRUENO_BACKEND=") + env : "best available";
  }
  std::printf("selected: %s (%s)\n", std::string(trueno::name(selected)).c_str(), why.c_str());
  std::printf("threads: %d (%s)\n", trueno::num_threads(),
              std::getenv("TRUENO_THREADS") ? "TRUENO_THREADS" : "physical cores");
  print_crossovers(opt.calibrate);
  return 0;
}

}  // namespace

std::function<int()> add_backends_command(CLI::App& app) {
  auto opt = std::make_shared<BackendsOptions>();
  CLI::App* cmd = app.add_subcommand("backends", "List compute backends, their availability and the one selected");
  cmd->add_option("--backend", opt->backend, "Check that this CPU tier or device can be forced (scalar, sse2, avx, avx2, avx512, neon, cuda, cuda:1, ...)");
  cmd->add_flag("--calibrate", opt->calibrate, "Measure the crossover table of ops on host data now (CPU vs each device) and cache it");
  return [cmd, opt] { return cmd->parsed() ? run_backends(*opt) : -1; };
}

}  // namespace realizar::cli
