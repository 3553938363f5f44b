// Shared model-loading options.
#include "model_options.h"

#include "trueno/error.h"
#include "trueno/threads.h"

namespace realizar::cli {

void ModelOptions::add_to(CLI::App* cmd) {
  cmd->add_option("-m,--model", model, "GGUF model file")->required();
  cmd->add_option("-t,--threads", threads, "Threads (default: all physical cores)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--backend", backend, "Compute backend (see `realizar backends`); default: the best available");
}

std::optional<trueno::Backend> ModelOptions::apply() const {
  trueno::set_num_threads(threads > 0 ? threads : trueno::physical_cores());
  if (backend.empty()) return std::nullopt;
  const trueno::Backend b = trueno::parse_backend(backend);
  trueno::require_available(b);
  if (b == trueno::Backend::CUDA || b == trueno::Backend::Vulkan)
    throw trueno::BackendUnavailable(std::string("--backend ") + std::string(trueno::name(b)) +
                                     ": realizar's forward pass runs on CPU backends in this version (GPU kernels: docs/CUDA.md)");
  trueno::set_backend(b);
  return b;
}

}  // namespace realizar::cli
