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
  if (b == trueno::Backend::Vulkan)
    throw trueno::BackendUnavailable("--backend vulkan: realizar has no Vulkan forward pass yet");
  if (b != trueno::Backend::CUDA) trueno::set_backend(b);  // CUDA: the sequence runs there; CPU helpers keep the best CPU backend
  return b;
}

}  // namespace realizar::cli
