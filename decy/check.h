// Checks: whether one kernel of a parsed module (and the __device__ helpers it reaches) is inside decy's
// subset; every construct outside it is a diagnostic naming it and its line (Note [Unsupported constructs]).
#pragma once
#include <string>
#include <vector>

#include "ir.h"

namespace decy {

struct Checked {
  const Function* kernel = nullptr;
  std::vector<const Function*> helpers;  // callees before callers (GLSL declares before use)
  std::vector<Diagnostic> errors;        // empty: translatable
};

// Kernel `name` of m; an empty name picks the only kernel of the file.
Checked check(const Module& m, const std::string& name);

// The CUDA functions glsl.cpp maps (builtins.h declares them).
bool is_builtin_function(const std::string& name);

// The WGSL target's limits on a kernel check() accepted (Note [WGSL limits], check_wgsl.cpp): the
// constructs WGSL cannot express, each named with its line; empty: translatable to WGSL.
struct WgslCheckOptions {
  bool subgroups = false;  // warp shuffles and warpSize allowed (WebGPU's `subgroups` feature)
};
std::vector<Diagnostic> check_wgsl(const Checked& c, const WgslCheckOptions& options);

}  // namespace decy
