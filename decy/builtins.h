// The CUDA builtins decy supports, as a header every parse includes first (no CUDA toolkit needed):
// the attributes, the index variables, the intrinsics of docs/DECY.md and the project's prelude typedefs.
#pragma once

namespace decy {

// Where the header appears to libclang (an in-memory file: CXUnsavedFile).
inline constexpr const char* kBuiltinsPath = "/decy/decy_builtins.cuh";
extern const char* const kBuiltinsHeader;

}  // namespace decy
