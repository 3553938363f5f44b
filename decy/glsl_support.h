// GLSL names and types for decy's IR, and the support functions (decy_srem, decy_f32_to_f16, decy_sincos,
// the correctly rounded intrinsics, ...) a generated shader declares when it uses them. Used by glsl.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "ir.h"

namespace decy::glsl {

std::string rename(const std::string& n);  // a CUDA name that GLSL reserves or decy uses -> decy_...
const char* glsl_type(Scalar s);           // the value type (8- and 16-bit: 32-bit values, Note [16-bit values])
bool small(Scalar s);                      // 8- or 16-bit
bool byte(Scalar s);                       // 8-bit
const char* storage_type(Scalar s);        // a buffer element's type (uint16_t, int8_t, ...)
std::string bare(const std::string& t);    // "(a + b)" -> "a + b" where the parentheses enclose the whole
std::string vec_name(const Type& t);       // vec4, uvec2, ... (Note [Vector types])
std::string gtype(const Type& t);          // a value's GLSL type: scalar, vector or struct
std::string stype(const Type& t);          // a buffer element's GLSL type
std::uint32_t elem_bytes(const Type& t);   // a buffer element's size in bytes
std::uint32_t scalar_bytes(Scalar s);      // a push constant's size (4 or 8)
bool is_int(Scalar s);                     // 32- or 64-bit integer

extern const std::map<std::string, std::string> kMath;     // CUDA math builtin -> GLSL function
extern const std::map<std::string, std::string> kRounded;  // __fadd_rn ... -> its operator

// The support functions a shader uses, declared after its buffers and shared variables.
struct SupportNeeds {
  std::set<std::string> rounded;  // __fadd_rn ... (Note [Correctly rounded intrinsics])
  bool sincos = false, workgroup_size = false, srem32 = false, srem64 = false, f32_to_f16 = false, shuffle64 = false,
       sync_or = false, shuffle_down = false, dp4a = false, erfc = false, byte_perm = false,
       double_math = false, ballot32 = false, half2 = false, bf16 = false;  // decy_exp64, decy_log64, decy_pow64, decy_sin64, decy_cos64 (Note [Double math])
  std::set<std::string> warp32;  // GLSL types of emulated shuffles (Note [Emulated warps])
};
std::string support_functions(const SupportNeeds& n);
// An emulated shuffle (Note [Emulated warps]): kind xor, down or idx; `t` the value's GLSL type.
std::string warp32_shuffle(const std::string& kind, const std::string& t, const std::string& v, const std::string& arg);

}  // namespace decy::glsl
