// Options shared by the commands that load a model: the file, threads and backend.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "realizar/model.h"
#include "trueno/backend.h"
#include "trueno/device.h"

namespace realizar::cli {

// --backend: a CPU tier (scalar, avx2, ...), a device ("cuda", "cuda:1"), or nothing (the parity gate picks).
struct BackendChoice {
  std::optional<trueno::Backend> cpu;
  std::optional<trueno::Device> device;
};

struct ModelOptions {
  std::string model;
  int threads = 0;  // 0: all physical cores
  std::string backend;
  std::string decode_gemv = "fused", prefill_precision = "f16", gemm_weights = "auto", decode_attention = "f16";
  bool recheck = false, no_gate = false;
  int tensor_parallel = 1;  // --tensor-parallel N: N ranks (loopback threads on the CPU; docs/MULTI_GPU.md)
  std::string devices;      // --devices 0,1: the CUDA devices of a tensor-parallel group (refused until it exists)
  void add_to(CLI::App* cmd);
  // --tensor-parallel and --devices (run, logits).
  void add_tensor_parallel_to(CLI::App* cmd);
  // Whether open() gives the loopback tensor-parallel sequence (a CPU sequence, not a GPU one).
  bool tensor_parallel_on_cpu() const { return tensor_parallel > 1; }
  // --decode-gemv, --prefill-precision, --gemm-weights and --decode-attention (CUDA only); throws naming an unknown value.
  CudaOptions cuda() const;
  // The sequence a command runs on (Note [Parity gate]): a forced CPU backend as asked; otherwise the GPU
  // backends in priority order through the parity gate (a forced GPU one is used even when it fails,
  // with a warning), the CPU when none passes. Prints the choice and why to stderr.
  std::unique_ptr<Sequence> open(const Model& m, const gguf::File& file, std::size_t n_ctx, std::span<const std::int32_t> prompt,
                                 const BackendChoice& forced) const;
  // Applies --threads and --backend; throws naming an unknown or unavailable backend or device.
  BackendChoice apply() const;
};

}  // namespace realizar::cli
