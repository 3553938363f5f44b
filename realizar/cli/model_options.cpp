// Shared model-loading options.
#include "model_options.h"

#include <cstdio>
#include <cstdlib>

#include "numbers.h"
#include "realizar/parity.h"
#include "trueno/error.h"
#include "trueno/threads.h"

namespace realizar::cli {

void ModelOptions::add_to(CLI::App* cmd) {
  cmd->add_option("-m,--model", model, "GGUF model file")->required();
  cmd->add_option("-t,--threads", threads, "Threads (0: TRUENO_THREADS if set, else all physical cores)")->check(integer_in(0, 4096));
  cmd->add_option("--backend", backend, "Compute backend (see `realizar backends`); default: the best available");
  cmd->add_option("--decode-gemv", decode_gemv,
                  "CUDA decode products: fused (quantized GEMV kernels) or cublas-f16 (weights dequantized to f16 at load, "
                  "cuBLAS; the baseline)")
      ->capture_default_str();
  cmd->add_option("--prefill-precision", prefill_precision,
                  "CUDA prompt products: f16 (cuBLAS, f32 accumulation), fp8 (cuBLASLt E4M3) or tokens (no batching)")
      ->capture_default_str();
  cmd->add_flag("--recheck", recheck, "Run the parity gate even when a verdict for this model and GPU is cached");
  cmd->add_flag("--no-parity-gate", no_gate, "Use the GPU backend without comparing its logits with the CPU's (warns)");
}

namespace {

// REALIZAR_PARITY_CACHE=<dir> or =off; else $XDG_CACHE_HOME/realizar/parity or ~/.cache/realizar/parity.
std::string parity_cache_dir() {
  if (const char* c = std::getenv("REALIZAR_PARITY_CACHE"); c != nullptr && *c != '\0')
    return std::string_view(c) == "off" ? std::string{} : std::string(c);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/realizar/parity";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/realizar/parity";
  return {};
}

}  // namespace

std::unique_ptr<Sequence> ModelOptions::open(const Model& m, const gguf::File& file, std::size_t n_ctx,
                                             std::span<const std::int32_t> prompt, std::optional<trueno::Backend> forced) const {
  if (forced && *forced != trueno::Backend::CUDA) {
    std::fprintf(stderr, "realizar: backend %s (forced)\n", std::string(trueno::name(*forced)).c_str());
    return make_sequence(m, n_ctx, forced);
  }
  parity::GateOptions g;
  g.skip = no_gate, g.recheck = recheck, g.forced = forced.has_value();
  g.cache_dir = parity_cache_dir();
  g.model_identity = parity::model_identity(file);
  g.log = [](const std::string& line) { std::fprintf(stderr, "realizar: parity gate: %s\n", line.c_str()); };
  const auto candidates = parity::gpu_candidates(m, cuda());
  if (forced && candidates.empty())  // apply() checked CUDA is available; this is a belt for the braces
    throw trueno::BackendUnavailable("--backend cuda: no CUDA device");
  parity::Selection s = parity::select(m, candidates, n_ctx, prompt, g);
  std::fprintf(stderr, "realizar: backend %s\n", s.line.c_str());
  if (no_gate && !candidates.empty())
    std::fprintf(stderr, "realizar: warning: --no-parity-gate: %s runs unchecked against the CPU\n", candidates.front().name.c_str());
  return std::move(s.sequence);
}

CudaOptions ModelOptions::cuda() const {
  CudaOptions o;
  o.decode_gemv = parse_decode_gemv(decode_gemv);
  o.prefill = parse_prefill_precision(prefill_precision);
  return o;
}

std::optional<trueno::Backend> ModelOptions::apply() const {
  if (threads > 0) trueno::set_num_threads(threads);  // -t overrides TRUENO_THREADS, the default otherwise
  const CudaOptions o = cuda();
  const bool cuda_flags = o.decode_gemv != CudaOptions::DecodeGemv::Fused || o.prefill != CudaOptions::Prefill::F16;
  if (backend.empty()) {
    if (cuda_flags) throw trueno::InvalidArgument("--decode-gemv and --prefill-precision apply to --backend cuda only");
    return std::nullopt;
  }
  const trueno::Backend b = trueno::parse_backend(backend);
  if (cuda_flags && b != trueno::Backend::CUDA)
    throw trueno::InvalidArgument("--decode-gemv and --prefill-precision apply to --backend cuda only");
  trueno::require_available(b);
  if (b == trueno::Backend::Vulkan)
    throw trueno::BackendUnavailable("--backend vulkan: realizar has no Vulkan forward pass yet");
  if (b != trueno::Backend::CUDA) trueno::set_backend(b);  // CUDA: the sequence runs there; CPU helpers keep the best CPU backend
  return b;
}

}  // namespace realizar::cli
