// Codegen: one checked kernel (check.h) as a WGSL compute shader for WebGPU, with a header comment that
// tells a host how to launch it (bindings, the uniform struct of scalar parameters, the workgroup size
// override, features). What WGSL cannot express is refused by check_wgsl (Note [WGSL limits]).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "ir.h"

namespace decy {

struct WgslOptions {
  bool subgroups = false;  // allow warp shuffles / warpSize: `enable subgroups;` (WebGPU feature 'subgroups')
};

struct WgslBinding {
  std::string name, type;  // the C parameter's name, the element type ("f32")
  bool readonly = false;   // var<storage, read> (const pointee), else var<storage, read_write>
};
struct WgslField {
  std::string name, type;  // "n", "i32"
  std::uint32_t offset = 0, size = 0;
};

struct Wgsl {
  std::string text;
  std::vector<WgslBinding> bindings;  // @binding(i) = the i-th pointer parameter
  std::vector<WgslField> uniforms;    // the scalar parameters in order: struct DecyParams at @binding(bindings.size())
  std::uint32_t uniform_bytes = 0;    // SizeOf(DecyParams) (0: no uniform binding); bind a multiple of 16
  bool subgroups = false;             // uses subgroup operations (`enable subgroups;`)
  std::vector<Diagnostic> errors;     // check's, check_wgsl's and codegen's (empty: text is valid)
};

// `source` names the input in the header comment.
Wgsl emit_wgsl(const Checked& c, const std::string& source, const WgslOptions& options = {});

}  // namespace decy
