// `realizar backends`: every trueno backend, available or not (with the reason), and the selection.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "commands.h"
#include "trueno/trueno.h"

namespace realizar::cli {
namespace {

struct BackendsOptions {
  std::string backend;
};

int run_backends(const BackendsOptions& opt) {
  std::printf("%-10s %-12s %s\n", "backend", "status", "detail");
  for (const auto& s : trueno::backend_report())
    std::printf("%-10s %-12s %s\n", std::string(trueno::name(s.backend)).c_str(),
                s.available ? "available" : "unavailable", s.reason.c_str());
  trueno::Backend selected;
  std::string why;
  if (!opt.backend.empty()) {
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
  return 0;
}

}  // namespace

std::function<int()> add_backends_command(CLI::App& app) {
  auto opt = std::make_shared<BackendsOptions>();
  CLI::App* cmd = app.add_subcommand("backends", "List compute backends, their availability and the one selected");
  cmd->add_option("--backend", opt->backend, "Check that this backend can be forced (scalar, sse2, avx, avx2, avx512, neon, ...)");
  return [cmd, opt] { return cmd->parsed() ? run_backends(*opt) : -1; };
}

}  // namespace realizar::cli
