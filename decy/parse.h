// Parse: a .cu file through libclang's C API (device-side CUDA, no toolkit: builtins.h) into decy's IR
// (ir.h). Constructs the IR cannot hold become diagnostics naming them and their line.
#pragma once
#include <string>
#include <vector>

#include "ir.h"

namespace decy {

struct ParseOptions {
  std::vector<std::string> defines;    // "NAME=VALUE" or "NAME" (-D)
  std::vector<std::string> includes;   // -I directories, searched before the system's (a harvest's stand-in headers)
  std::vector<std::string> instances;  // template kernel instances asked for ("k<64, true>"), beside the file's own
                                       // explicit instantiations (Note [Template kernels], parse.cpp)
};

// A template kernel instance's identifier: "k<64, true>" -> "k_64_true" (what --kernel and check() match).
std::string instance_name(const std::string& written);

// The file at `path` (read by libclang).
Module parse_file(const std::string& path, const ParseOptions& options = {});
// `text` as if it were the file `name` (tests).
Module parse_source(const std::string& name, const std::string& text, const ParseOptions& options = {});

// The compiler flags of a parse (for the docs and `decy list --verbose`).
std::vector<std::string> parse_flags(const ParseOptions& options);

}  // namespace decy
