// Shared model-loading options.
#include "model_options.h"

#include "trueno/error.h"
#include "trueno/threads.h"

namespace realizar::cli {

void ModelOptions::add_to(CLI::App* cmd) {
  cmd->add_option("-m,--model", model, "GGUF model file")->required();
  cmd->add_option("-t,--threads", threads, "Threads (default: all physical cores)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--backend", backend, "Compute backend (see `realizar backends`); default: the best available");
  cmd->add_option("--decode-gemv", decode_gemv,
                  "CUDA decode products: fused (quantized GEMV kernels) or cublas-f16 (weights dequantized to f16 at load, "
                  "cuBLAS; the baseline)")
      ->capture_default_str();
  cmd->add_option("--prefill-precision", prefill_precision,
                  "CUDA prompt products: f16 (cuBLAS, f32 accumulation), fp8 (cuBLASLt E4M3) or tokens (no batching)")
      ->capture_default_str();
}

CudaOptions ModelOptions::cuda() const {
  CudaOptions o;
  o.decode_gemv = parse_decode_gemv(decode_gemv);
  o.prefill = parse_prefill_precision(prefill_precision);
  return o;
}

std::optional<trueno::Backend> ModelOptions::apply() const {
  trueno::set_num_threads(threads > 0 ? threads : trueno::physical_cores());
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
