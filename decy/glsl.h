// Codegen: one checked kernel (check.h) as a GLSL 450 compute shader for Vulkan, with a header comment
// that tells a host how to launch it (bindings, push constants, workgroup size).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "ir.h"

namespace decy {

struct GlslBinding {
  std::string name, type;  // "x", "float"
  bool readonly = false;
};
struct GlslPush {
  std::string name, type;
  std::uint32_t offset = 0, size = 0;
};

struct Glsl {
  std::string text;
  std::vector<GlslBinding> bindings;  // binding i = the i-th pointer parameter
  std::vector<GlslPush> push;         // the scalar parameters, in order (std430 offsets)
  std::uint32_t push_bytes = 0;
  bool subgroups = false;             // uses subgroup operations (needs Vulkan 1.1 and their support)
  std::vector<Diagnostic> errors;     // what codegen itself could not express (empty: text is valid)
};

struct GlslOptions {
  // Note [Emulated warps] (glsl_support.cpp): warpSize is 32 and warp shuffles go through shared memory
  // between barriers, for devices whose subgroups are not 32 wide (lavapipe's 8). Valid only when every
  // thread of the block reaches every shuffle (block reductions do); decy does not check that.
  bool warp32 = false;
};

// `source` names the input in the header comment.
Glsl emit_glsl(const Checked& c, const std::string& source, const GlslOptions& options = {});

}  // namespace decy
