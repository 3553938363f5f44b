// Shared model-loading options.
#include "model_options.h"

#include <cstdio>
#include <cstdlib>

#include "numbers.h"
#include "realizar/parity.h"
#include "realizar/tensor_parallel.h"
#include "trueno/comm.h"
#include "trueno/error.h"
#include "trueno/threads.h"
#include "util/strcat.h"

namespace realizar::cli {

void ModelOptions::add_to(CLI::App* cmd) {
  cmd->add_option("-m,--model", model, "GGUF model file")->required();
  cmd->add_option("-t,--threads", threads, "Threads (0: TRUENO_THREADS if set, else all physical cores)")->check(integer_in(0, 4096));
  cmd->add_option("--backend", backend,
                  "A CPU tier (scalar, sse2, avx, avx2, avx512, neon) or a device (cuda, cuda:1, ...; see `realizar backends`); "
                  "default: the first device that passes the parity gate, else the best CPU tier");
  cmd->add_option("--decode-gemv", decode_gemv,
                  "CUDA decode products: fused (quantized GEMV kernels) or cublas-f16 (weights dequantized to f16 at load, "
                  "cuBLAS; the baseline)")
      ->capture_default_str();
  cmd->add_option("--prefill-precision", prefill_precision,
                  "CUDA prompt products: f16 (cuBLAS, f32 accumulation), fp8 (cuBLASLt E4M3) or tokens (no batching)")
      ->capture_default_str();
  cmd->add_option("--gemm-weights", gemm_weights,
                  "CUDA prompt and batched-step products: f16 weights staged (dequantized a layer ahead, per pass), resident "
                  "(dequantized once at load: 2 more bytes per weight) or auto (resident when it fits in half the free memory)")
      ->capture_default_str();
  cmd->add_option("--decode-attention", decode_attention,
                  "CUDA decode attention past 256 positions: over the f16 KV cache, or q8 (an 8-bit copy of it kept beside, "
                  "half the bytes read per position, 1.53x the cache's memory; heads of size 64 or 128)")
      ->capture_default_str();
  cmd->add_flag("--recheck", recheck, "Run the parity gate even when a verdict for this model and GPU is cached");
  cmd->add_flag("--no-parity-gate", no_gate, "Use the GPU backend without comparing its logits with the CPU's (warns)");
}

void ModelOptions::add_tensor_parallel_to(CLI::App* cmd) {
  cmd->add_option("--tensor-parallel", tensor_parallel,
                  "Split the model across N tensor-parallel ranks: on the CPU, N threads joined by the loopback "
                  "communicator (the sharding checked without GPUs; docs/MULTI_GPU.md)")
      ->check(integer_in(1, 64))
      ->capture_default_str();
  cmd->add_option("--devices", devices, "CUDA devices of a tensor-parallel group (0,1,...): needs that many GPUs and NCCL");
}

namespace {

// Why --devices cannot run here: the CUDA devices and NCCL it needs, and that the CUDA forward has no
// tensor-parallel path yet (docs/MULTI_GPU.md says which runs remain).
std::string devices_refusal(const std::string& list) {
  std::size_t wanted = 1, found = 0;
  for (const char ch : list) wanted += ch == ',';
  std::string cuda_why;
  for (const auto& s : trueno::device_report())
    if (s.device.kind == trueno::DeviceKind::CUDA) {
      if (s.available) ++found;
      else if (cuda_why.empty()) cuda_why = s.detail;
    }
  const trueno::CollectiveStatus nccl = trueno::multi_device_status();
  return strcat("--devices ", list, ": tensor parallelism over CUDA devices needs ", wanted, " CUDA devices (", found, " here",
                cuda_why.empty() ? "" : ": " + cuda_why, ") and NCCL (", nccl.available ? "" : "unavailable: ", nccl.detail,
                "), and this build's CUDA forward pass has no tensor-parallel path yet; --tensor-parallel N runs N ranks on the CPU");
}

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
                                             std::span<const std::int32_t> prompt, const BackendChoice& forced) const {
  if (tensor_parallel > 1) {  // the CPU pass split N ways: no parity gate (it is the CPU's arithmetic)
    auto seq = make_tp_sequence(shard_model(m, tensor_parallel), n_ctx);
    std::fprintf(stderr, "realizar: backend %s\n", seq->backend_name().c_str());
    return seq;
  }
  if (forced.cpu) {
    std::fprintf(stderr, "realizar: backend %s (forced)\n", std::string(trueno::name(*forced.cpu)).c_str());
    return make_sequence(m, n_ctx);
  }
  parity::GateOptions g;
  g.skip = no_gate, g.recheck = recheck, g.forced = forced.device.has_value();
  g.cache_dir = parity_cache_dir();
  g.model_identity = parity::model_identity(file);
  g.log = [](const std::string& line) { std::fprintf(stderr, "realizar: parity gate: %s\n", line.c_str()); };
  const auto candidates = parity::gpu_candidates(m, cuda(), forced.device);
  if (forced.device && candidates.empty())
    throw trueno::BackendUnavailable(strcat("--backend ", forced.device->str(), ": realizar has no ", trueno::name(forced.device->kind),
                                            " forward pass in this build"));
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
  o.gemm_weights = parse_gemm_weights(gemm_weights);
  o.decode_attention = parse_decode_attention(decode_attention);
  return o;
}

BackendChoice ModelOptions::apply() const {
  if (threads > 0) trueno::set_num_threads(threads);  // -t overrides TRUENO_THREADS, the default otherwise
  const CudaOptions o = cuda();
  const bool cuda_flags = o.decode_gemv != CudaOptions::DecodeGemv::Fused || o.prefill != CudaOptions::Prefill::F16 ||
                          o.gemm_weights != CudaOptions::GemmWeights::Auto || o.decode_attention != CudaOptions::DecodeAttention::F16;
  BackendChoice c;
  if (!backend.empty()) c.device = trueno::parse_device(backend);
  if (!devices.empty()) throw trueno::BackendUnavailable(devices_refusal(devices));
  if (tensor_parallel > 1 && c.device) {
    std::string all = "0";
    for (int i = 1; i < tensor_parallel; ++i) all += strcat(",", i);
    throw trueno::InvalidArgument(strcat("--tensor-parallel ", tensor_parallel, " runs its ranks on the CPU, not on --backend ", backend,
                                         "; ", devices_refusal(all)));
  }
  if (cuda_flags && backend.empty()) throw trueno::InvalidArgument("--decode-gemv, --prefill-precision, --gemm-weights and --decode-attention apply to --backend cuda only");
  if (cuda_flags && (!c.device || c.device->kind != trueno::DeviceKind::CUDA))
    throw trueno::InvalidArgument("--decode-gemv, --prefill-precision, --gemm-weights and --decode-attention apply to --backend cuda only");
  if (backend.empty()) return c;
  if (c.device) {
    trueno::require_available(*c.device);
    if (!has_forward(c.device->kind))
      throw trueno::BackendUnavailable(strcat("--backend ", backend, ": realizar has no ", trueno::name(c.device->kind), " forward pass yet"));
    return c;  // the sequence runs there; the CPU's helpers keep the best CPU tier
  }
  c.cpu = trueno::parse_backend(backend);
  trueno::set_backend(*c.cpu);
  return c;
}

}  // namespace realizar::cli
