// Options shared by the commands that load a model: the file, threads and backend.
#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "realizar/model.h"
#include "trueno/backend.h"

namespace realizar::cli {

struct ModelOptions {
  std::string model;
  int threads = 0;  // 0: all physical cores
  std::string backend;
  std::string decode_gemv = "fused", prefill_precision = "f16";
  void add_to(CLI::App* cmd);
  // --decode-gemv and --prefill-precision (CUDA only); throws naming an unknown value.
  CudaOptions cuda() const;
  // Applies --threads and --backend; throws naming an unknown or unavailable backend.
  std::optional<trueno::Backend> apply() const;
};

}  // namespace realizar::cli
