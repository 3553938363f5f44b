// Codegen: decy's IR -> GLSL 450 compute. Note [CUDA to GLSL]: a CUDA block is a workgroup whose x size is
// specialization constant 0 (blockDim.x; y = z = 1), the grid is the dispatch; each pointer parameter is a
// storage buffer (readonly when const, restrict when __restrict__) at binding = its rank among the pointer
// parameters, scalars are a push-constant block in parameter order (std430); `p += n` on a pointer becomes an
// element offset p_off (so do local pointers into a buffer, "views"); __shared__ arrays are `shared`
// globals; __syncthreads() is groupMemoryBarrier(); barrier(); warp shuffles are subgroup shuffles (warpSize
// is gl_SubgroupSize, so code written with warpSize is right for any subgroup size, code that assumes 32
// needs a subgroup of 32); every operator is parenthesized, every conversion explicit.
#include "glsl.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace decy {
namespace {

const std::set<std::string> kReserved = {
    "attribute", "const", "uniform", "varying", "buffer", "shared", "coherent", "volatile", "restrict", "readonly", "writeonly",
    "layout", "centroid", "flat", "smooth", "noperspective", "patch", "sample", "subroutine", "in", "out", "inout", "invariant",
    "precise", "discard", "lowp", "mediump", "highp", "precision", "struct", "common", "partition", "active", "asm", "class",
    "union", "enum", "typedef", "template", "this", "resource", "goto", "inline", "noinline", "public", "static", "extern",
    "external", "interface", "long", "short", "half", "fixed", "unsigned", "superp", "input", "output", "filter", "sizeof",
    "cast", "namespace", "using", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4", "mat2", "mat3",
    "mat4", "double", "main", "exp", "log", "sqrt", "inversesqrt", "max", "min", "abs", "tanh", "sin", "cos", "pow", "floor",
    "ceil", "fma", "barrier", "length", "dot", "mix", "step", "clamp", "sign", "fract", "mod", "distance", "cross", "normalize"};

std::string rename(const std::string& n) {
  if (kReserved.contains(n) || n.starts_with("gl_") || n.find("__") != std::string::npos || n.starts_with("decy_")) {
    std::string r = "decy_";
    for (char ch : n) r += ch == '_' && !r.empty() && r.back() == '_' ? 'u' : ch;
    return r;
  }
  return n;
}

const char* glsl_type(Scalar s) {
  switch (s) {
    case Scalar::Void: return "void";
    case Scalar::Bool: return "bool";
    case Scalar::I32: return "int";
    case Scalar::U32: return "uint";
    case Scalar::I64: return "int64_t";
    case Scalar::U64: return "uint64_t";
    case Scalar::F32: return "float";
    case Scalar::U16: return "uint";  // Note [16-bit values]
    case Scalar::I16: return "int";
    case Scalar::U8: return "uint";
    case Scalar::I8: return "int";
    default: return "float /*unsupported*/";
  }
}
// Note [16-bit values]: CUDA's unsigned short / short (the f16 bits of a KV cache) are 32-bit uint/int
// values in the shader, truncated wherever C converts to them (x & 0xffff, a sign extension), and 16-bit
// only as storage-buffer elements (GL_EXT_shader_16bit_storage: loads widen, stores narrow). Compound
// assignments and ++/-- of 16-bit lvalues (whose wrap-around the 32-bit value would miss) are refused.
// The 8-bit types (u8 / i8: quantized weights, q8 activations, fp8) are the same with 8 bits:
// uint8_t / int8_t buffer elements (GL_EXT_shader_8bit_storage, the storageBuffer8BitAccess feature),
// 32-bit values truncated by & 0xff or an 8-bit sign extension.
bool small(Scalar s) { return s == Scalar::U16 || s == Scalar::I16 || s == Scalar::U8 || s == Scalar::I8; }
bool byte(Scalar s) { return s == Scalar::U8 || s == Scalar::I8; }
const char* storage_type(Scalar s) {
  switch (s) {
    case Scalar::U16: return "uint16_t";
    case Scalar::I16: return "int16_t";
    case Scalar::U8: return "uint8_t";
    case Scalar::I8: return "int8_t";
    default: return glsl_type(s);
  }
}
// "(a + b)" -> "a + b" where the outer parentheses enclose the whole text (statements, conditions).
std::string bare(const std::string& t) {
  if (t.size() < 2 || t.front() != '(' || t.back() != ')') return t;
  int depth = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 < t.size()) return t;
  }
  return t.substr(1, t.size() - 2);
}

// Note [Vector types]: CUDA's float2/float4, int2/int4, uint2/uint4 are GLSL's vec2/vec4, ivec, uvec
// (members .x .y .z .w, make_float4(...) -> vec4(...)). A pointer of another element type into a buffer -
// `reinterpret_cast<const float4*>(x)`, `*reinterpret_cast<const u16*>(b)` on a u8 buffer - reads and writes
// the buffer through an alias: a second block at the same binding whose elements are the new type
// (`vec4 x_vec4[]`, 16-byte loads as in CUDA), indexed by the view's byte offset / the new element size (CUDA
// requires that alignment too). A buffer with an alias is not `restrict`. A pointer cast to an integer
// (`reinterpret_cast<u64>(x) & 15`, an alignment test) is the pointer's byte offset in its binding: right
// where the binding starts at a multiple of the alignment tested (the host binds whole buffers at offset 0,
// and Vulkan allocations are at least 16-byte aligned on the drivers decy has met: an assumption, stated).
std::string vec_name(const Type& t) {
  const char* prefix = t.scalar == Scalar::I32 ? "i" : t.scalar == Scalar::U32 ? "u" : "";
  return prefix + std::string("vec") + std::to_string(t.lanes);
}
// Note [Structs of scalars]: a struct whose fields are 32- and 64-bit scalars (sample_ops.cu's
// TopKCandidate) is a GLSL struct of the same fields, declared before the buffers; with scalar alignment
// only, C's layout and std430's agree (each field at a multiple of its size, the struct's size a multiple
// of its largest). A buffer of them is a buffer of GLSL structs, also as an alias (Note [Vector types]:
// `reinterpret_cast<TopKCandidate*>(result + 2)` on an int buffer); `.field` is the same. Structs with
// pointers, arrays or vectors inside, and structs passed by value to a kernel, are refused.
std::string gtype(const Type& t) {
  if (t.record != nullptr) return rename(t.record->name);
  return t.lanes != 0 ? vec_name(t) : glsl_type(t.scalar);
}
std::string stype(const Type& t) {
  if (t.record != nullptr) return rename(t.record->name);
  return t.lanes != 0 ? vec_name(t) : storage_type(t.scalar);
}
std::uint32_t elem_bytes(const Type& t) {
  if (t.record != nullptr) return t.record->bytes;
  if (t.lanes != 0) return 4 * t.lanes;
  switch (t.scalar) {
    case Scalar::U8: case Scalar::I8: return 1;
    case Scalar::U16: case Scalar::I16: return 2;
    case Scalar::U64: case Scalar::I64: return 8;
    default: return 4;
  }
}

std::uint32_t scalar_bytes(Scalar s) { return s == Scalar::I64 || s == Scalar::U64 ? 8 : 4; }
bool is_int(Scalar s) { return s == Scalar::I32 || s == Scalar::U32 || s == Scalar::I64 || s == Scalar::U64; }

const std::map<std::string, std::string> kMath = {
    {"expf", "exp"},   {"__expf", "exp"},   {"logf", "log"},   {"__logf", "log"},     {"sqrtf", "sqrt"}, {"rsqrtf", "inversesqrt"},
    {"fmaxf", "max"},  {"fminf", "min"},    {"fabsf", "abs"},  {"tanhf", "tanh"},     {"sinf", "sin"},   {"cosf", "cos"},
    {"powf", "pow"},   {"floorf", "floor"}, {"ceilf", "ceil"}, {"fmaf", "fma"},       {"min", "min"},    {"max", "max"},
    {"__float_as_int", "floatBitsToInt"}, {"__float_as_uint", "floatBitsToUint"}, {"__int_as_float", "intBitsToFloat"},
    {"__uint_as_float", "uintBitsToFloat"}, {"make_float2", "vec2"}, {"make_float4", "vec4"}, {"make_int2", "ivec2"},
    {"make_int4", "ivec4"}, {"make_uint2", "uvec2"}, {"make_uint4", "uvec4"}, {"__sinf", "sin"}, {"__cosf", "cos"}, {"exp2f", "exp2"}, {"rintf", "roundEven"},
    {"ldexpf", "ldexp"}, {"frexpf", "frexp"}};

// Note [Correctly rounded intrinsics]: CUDA's __fadd_rn / __fsub_rn / __fmul_rn are one IEEE operation each,
// rounded to nearest even and never contracted into a fused multiply-add. Vulkan requires OpFAdd, OpFSub and
// OpFMul to be correctly rounded, and a `precise` result (SPIR-V NoContraction) forbids fusing them: each is a
// function whose result is `precise`. __fdiv_rn is the same `precise` a / b, but Vulkan promises only 2.5 ULP
// for a division (|b| in [2^-126, 2^126]): correctly rounded where the driver's division is (lavapipe's,
// LLVM's IEEE fdiv: DecyVulkanGpu.ProjectRepeatPenaltyMatchesTheCpu), not on every driver. __float2int_rn is
// int(roundEven(x)) (ties to even, as cvt.rni); rintf roundEven; frexpf and ldexpf GLSL's frexp and ldexp
// (GLSL leaves frexp of an infinity or NaN and an ldexp that overflows undefined).
const std::map<std::string, std::string> kRounded = {
    {"__fadd_rn", "+"}, {"__fsub_rn", "-"}, {"__fmul_rn", "*"}, {"__fdiv_rn", "/"}};

// Note [sincosf]: GLSL's sin and cos are bounded (absolute 2^-11) only on [-pi, pi], and a rope angle is up
// to the context length in radians. decy_sincos reduces x by k = round(x / 2pi) first (Cody-Waite: 2pi =
// C1 + C2 + C3, C1 of 8 significant bits and C2 of 12, so k * C1 and k * C2 are exact for |k| < 2^12, |x|
// below ~25700; `precise` keeps the order), then takes sin and cos of the reduced angle.
const char* const kSincos =
    "\n// sincosf (Note [sincosf] in decy/glsl.cpp): reduce to [-pi, pi] (Cody-Waite), then sin and cos.\n"
    "void decy_sincos(float x, out float s, out float c) {\n"
    "  precise float k = roundEven(x * 0.159154937f);\n"
    "  precise float r = ((x - k * 6.28125f) - k * 0.00193500519f) - k * 3.01991605e-07f;\n"
    "  s = sin(r);\n  c = cos(r);\n}\n";

class Emitter {
 public:
  Emitter(const Checked& c, Glsl& out) : c_(c), out_(out) {}

  std::string run(const std::string& source) {
    const Function& k = *c_.kernel;
    std::uint32_t binding = 0;
    for (const auto& p : k.params) {
      if (p.type.pointer) {
        buffers_[p.name] = binding++;
        buffer_types_[rename(p.name)] = p.type;
        out_.bindings.push_back({rename(p.name), stype(p.type), p.type.is_const});
        if (small(p.type.scalar)) (byte(p.type.scalar) ? storage8_ : storage16_) = true;
      } else {
        const std::uint32_t sz = scalar_bytes(p.type.scalar);
        out_.push_bytes = (out_.push_bytes + sz - 1) / sz * sz;
        out_.push.push_back({rename(p.name), glsl_type(p.type.scalar), out_.push_bytes, sz});
        out_.push_bytes += sz;
      }
      if (is64(p.type.scalar)) int64_ = true;
    }
    std::vector<const Function*> all = c_.helpers;
    all.push_back(&k);
    for (const Function* f : all) {
      collect_shared(f->body, f->name);
      collect_records(f->body);
      for (const auto& p : f->params) note_record(p.type);
      note_record(f->ret);
    }
    fn_ = k.name;
    for (const auto& p : k.params)
      if (!p.type.pointer && p.type.record != nullptr) error(p.loc, "struct parameter '" + p.name + "' passed by value (not in this slice)");
      else if (!p.type.pointer && p.type.lanes != 0) error(p.loc, "vector parameter '" + p.name + "' passed by value (not in this slice)");
      else if (!p.type.pointer && small(p.type.scalar)) error(p.loc, std::string(byte(p.type.scalar) ? "8" : "16") + "-bit scalar parameter '" + p.name + "' (push constants are 32-bit here)");
    for (const auto& p : k.params)
      if (p.type.pointer && modifies(k.body, p.name)) offsets_[p.name] = rename(p.name) + "_off";

    std::ostringstream body;
    body << "void main() {\n";
    const auto flags = [&] {  // Note [Optional buffers]: after the body, which finds them
      for (const auto& p : k.params)
        if (p.type.pointer && optional_.contains(rename(p.name))) {
          out_.push_bytes = (out_.push_bytes + 3) / 4 * 4;
          out_.push.push_back({"decy_has_" + rename(p.name), "uint", out_.push_bytes, 4});
          out_.push_bytes += 4;
        }
    };
    for (const auto& p : k.params)
      if (!p.type.pointer) body << "  " << glsl_type(p.type.scalar) << " " << rename(p.name) << " = decy_pc." << rename(p.name) << ";\n";
    for (const auto& [name, off] : offsets_) body << "  uint " << off << " = 0u;\n";
    level_ = 1;
    for (const auto& s : k.body.body) body << stmt(s);
    body << "}\n";
    flags();
    std::string text = body.str();
    for (auto it = helper_texts_.rbegin(); it != helper_texts_.rend(); ++it) text = *it + "\n" + text;
    return header(source) + globals() + text;
  }

 private:
  static bool is64(Scalar s) { return s == Scalar::I64 || s == Scalar::U64; }

  void error(const Loc& l, std::string what) { out_.errors.push_back({l, std::move(what)}); }

  std::string header(const std::string& source) {
    const Function& k = *c_.kernel;
    std::ostringstream h;
    h << "// Generated by decy from " << source << ", kernel " << k.name << "; do not edit (docs/DECY.md).\n"
      << "// Launch: one workgroup per CUDA block; local_size_x = specialization constant 0 (blockDim.x), y = z = 1;\n"
      << "//   vkCmdDispatch(gridDim.x, gridDim.y, gridDim.z).\n"
      << "// Bindings (descriptor set 0, storage buffers, std430), one per pointer parameter in order:\n";
    std::size_t b = 0;
    for (const auto& p : k.params)
      if (p.type.pointer) {
        h << "//   binding " << b << ": " << out_.bindings[b].name << " " << out_.bindings[b].type << "[] "
          << (p.type.is_const ? "readonly" : "read-write") << " (" << p.type.c_name << " " << p.name << ")";
        if (const auto a = aliases_.find(out_.bindings[b].name); a != aliases_.end())
          for (const auto& t : a->second) h << "; also read as " << t << "[] (the same buffer: Note [Vector types])";
        h << "\n";
        ++b;
      }
    if (b == 0) h << "//   none\n";
    h << "// Push constants (std430, " << out_.push_bytes << " bytes), the scalar parameters in order"
      << (optional_.empty() ? "" : ", then a flag per buffer the kernel tests against nullptr") << ":\n";
    for (const auto& p : out_.push) {
      h << "//   offset " << p.offset << ": " << p.type << " " << p.name << " (" << p.size << " bytes)";
      if (p.name.starts_with("decy_has_")) {  // Note [Optional buffers]
        const std::string buffer = p.name.substr(9);
        std::size_t b = 0;
        while (b < out_.bindings.size() && out_.bindings[b].name != buffer) ++b;
        h << ": 1 when binding " << b << " (" << buffer << ") holds data, 0 for CUDA's nullptr (then bind any buffer there)";
      }
      h << "\n";
    }
    if (out_.push.empty()) h << "//   none\n";
    if (subgroup_) {
      h << "// Subgroups: warp shuffles are subgroup shuffles; warpSize is gl_SubgroupSize. A kernel that assumes a\n"
        << "//   warp of 32 lanes (literal shuffle offsets) needs a subgroup size of 32.\n";
    }
    if (int64_) h << "// 64-bit integers: needs the shaderInt64 device feature.\n";
    if (storage16_) h << "// 16-bit buffer elements: needs the storageBuffer16BitAccess device feature.\n";
    if (storage8_) h << "// 8-bit buffer elements: needs the storageBuffer8BitAccess device feature (Vulkan 1.2).\n";
    return h.str();
  }

  std::string globals() {
    std::ostringstream g;
    g << "#version 450\n";
    if (int64_) g << "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
    if (storage16_) g << "#extension GL_EXT_shader_16bit_storage : require\n";
    if (storage8_) g << "#extension GL_EXT_shader_8bit_storage : require\n";
    if (subgroup_) g << "#extension GL_KHR_shader_subgroup_basic : require\n";
    if (shuffle_) g << "#extension GL_KHR_shader_subgroup_shuffle : require\n";
    if (shuffle_down_) g << "#extension GL_KHR_shader_subgroup_shuffle_relative : require\n";
    g << "\nlayout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;\n\n";
    for (const auto& [name, r] : records_) {  // Note [Structs of scalars]
      g << "struct " << rename(name) << " {";
      for (const auto& [field, scalar] : r->fields) g << " " << glsl_type(scalar) << " " << rename(field) << ";";
      g << " };\n";
    }
    const Function& k = *c_.kernel;
    for (const auto& p : k.params)
      if (p.type.pointer)
      {
        const std::string name = rename(p.name);
        const auto alias = aliases_.find(name);
        g << "layout(std430, set = 0, binding = " << buffers_.at(p.name) << ") " << (p.type.restrict_ && alias == aliases_.end() ? "restrict " : "")
          << (p.type.is_const ? "readonly " : "") << "buffer decy_buf_" << name << " { " << stype(p.type) << " " << name << "[]; };\n";
        if (alias != aliases_.end())
          for (const auto& t : alias->second)  // Note [Vector types]: the same buffer, other elements
            g << "layout(std430, set = 0, binding = " << buffers_.at(p.name) << ") " << (p.type.is_const ? "readonly " : "") << "buffer decy_buf_"
              << name << "_" << t << " { " << t << " " << name << "_" << t << "[]; };\n";
      }
    if (!out_.push.empty()) {
      g << "layout(push_constant) uniform decy_push {";
      for (const auto& p : out_.push) g << " " << p.type << " " << p.name << ";";
      g << " } decy_pc;\n";
    }
    for (const auto& [s, name] : shared_)
      g << "shared " << gtype(s.type) << " " << name << (s.type.array ? "[" + std::to_string(s.type.array) + "]" : "") << ";\n";
    for (const auto& name : rounded_)
      g << "\nfloat decy" << name.substr(1) << "(float a, float b) {  // Note [Correctly rounded intrinsics]\n  precise float r = a "
        << kRounded.at(name) << " b;\n  return r;\n}\n";
    if (sincos_) g << kSincos;
    if (workgroup_fn_) g << "\nuvec3 decy_workgroup_size() { return gl_WorkGroupSize; }\n";
    if (srem32_) g << "\nint decy_srem(int a, int b) { return a - b * (a / b); }  // C's %: the sign of a\n";
    if (srem64_) g << "\nint64_t decy_srem(int64_t a, int64_t b) { return a - b * (a / b); }\n";
    if (f16_)
      g << "\n// f32 -> f16 bits, round to nearest even (as PTX cvt.rn.f16.f32; packHalf2x16 leaves the rounding to the\n"
        << "// implementation): src/vulkan/shaders/common.glsl's f32_to_f16.\n"
        << "uint decy_f32_to_f16(float f) {\n"
        << "  const uint x = floatBitsToUint(f);\n  const uint sign = (x >> 16) & 0x8000u;\n  const uint e = (x >> 23) & 0xffu;\n"
        << "  uint m = x & 0x7fffffu;\n  if (e == 0xffu) return sign | 0x7c00u | (m != 0u ? 0x200u | (m >> 13) : 0u);\n"
        << "  const int ne = int(e) - 112;\n  if (ne >= 31) return sign | 0x7c00u;\n  if (ne <= 0) {\n    if (ne < -10) return sign;\n"
        << "    m |= 0x800000u;\n    const uint shift = uint(14 - ne);\n    uint h = m >> shift;\n"
        << "    const uint rem = m & ((1u << shift) - 1u), half_ = 1u << (shift - 1u);\n"
        << "    if (rem > half_ || (rem == half_ && (h & 1u) != 0u)) ++h;\n    return sign | h;\n  }\n"
        << "  uint h = sign | (uint(ne) << 10) | (m >> 13);\n  const uint rem = m & 0x1fffu;\n"
        << "  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;\n  return h;\n}\n";
    if (shuffle64_)
      g << "\nuint64_t decy_shfl_xor64(uint64_t v, uint o) {\n  const uvec2 h = unpackUint2x32(v);\n"
        << "  return packUint2x32(uvec2(subgroupShuffleXor(h.x, o), subgroupShuffleXor(h.y, o)));\n}\n";
    if (sync_or_)
      g << "\nshared uint decy_sync_or;\n\n// __syncthreads_or: a barrier (global and shared memory, as __syncthreads) and the OR of every thread's p.\n"
        << "int decy_syncthreads_or(int p) {\n  groupMemoryBarrier();\n  barrier();\n  if (gl_LocalInvocationIndex == 0u) decy_sync_or = 0u;\n"
        << "  memoryBarrierShared();\n  barrier();\n  if (p != 0) atomicOr(decy_sync_or, 1u);\n  memoryBarrierShared();\n  barrier();\n"
        << "  const uint r = decy_sync_or;\n  barrier();  // every thread has read it before a later call resets it\n  return int(r);\n}\n";
    if (shuffle_down_)
      for (const char* t : {"float", "int", "uint"})
        g << "\n" << t << " decy_shfl_down(" << t << " v, uint d) {  // CUDA: lanes past the end keep their value\n  " << t
          << " r = subgroupShuffleDown(v, d);\n  return gl_SubgroupInvocationID + d < gl_SubgroupSize ? r : v;\n}\n";
    g << "\n";
    return g.str();
  }

  void note_record(const Type& t) {
    if (t.record == nullptr) return;
    records_[t.record->name] = t.record;
    for (const auto& [field, scalar] : t.record->fields)
      if (is64(scalar)) int64_ = true;
  }
  void collect_records(const Stmt& s) {
    for (const auto& d : s.decls) note_record(d.type);
    for (const auto& b : s.body) collect_records(b);
  }

  // __shared__ variables become globals, one per (function, name) as in CUDA; a name two functions use
  // (the prelude's block_sum and block_max both have `part`) is prefixed with its function's.
  void collect_shared(const Stmt& s, const std::string& fn) {
    for (const auto& d : s.decls)
      if (d.shared) {
        if (d.has_init) error(d.loc, "__shared__ variable '" + d.name + "' with an initializer");
        std::string name = rename(d.name);
        for (const auto& o : shared_)
          if (o.second == name) name = rename(fn) + "_" + rename(d.name);
        shared_names_[fn + "/" + d.name] = name;
        shared_.emplace_back(d, name);
      }
    for (const auto& b : s.body) collect_shared(b, fn);
  }

  std::string var_name(const std::string& name) const {
    auto it = shared_names_.find(fn_ + "/" + name);
    return it != shared_names_.end() ? it->second : rename(name);
  }

  static bool modifies_expr(const Expr& e, const std::string& name) {
    const bool target = !e.args.empty() && e.args[0].kind == Expr::Kind::Var && e.args[0].name == name;
    if (target && (e.kind == Expr::Kind::Postfix || (e.kind == Expr::Kind::Unary && (e.op == "++" || e.op == "--")) ||
                   (e.kind == Expr::Kind::Binary && (e.op == "+=" || e.op == "-=" || e.op == "="))))
      return true;
    for (const auto& a : e.args)
      if (modifies_expr(a, name)) return true;
    return false;
  }
  static bool modifies(const Stmt& s, const std::string& name) {
    for (const auto& e : s.exprs)
      if (modifies_expr(e, name)) return true;
    for (const auto& d : s.decls)
      if (d.has_init && modifies_expr(d.init, name)) return true;
    for (const auto& b : s.body)
      if (modifies(b, name)) return true;
    return false;
  }

  // Note [Helpers with pointer parameters]: GLSL functions take no buffers, so a __device__ helper is
  // emitted once per combination of buffers its pointer parameters are given at its call sites
  // (`f_x_w(uint p_off, ...)` reads buffer x through p), the element offset passed as a uint. Emitted on
  // first call, so every callee precedes its caller.
  std::string helper(const Function& f, const std::vector<std::string>& buffers) {
    std::string name = rename(f.name);
    for (const auto& b : buffers) name += "_" + b;
    if (emitted_.contains(name)) return name;
    emitted_.insert(name);
    auto saved_views = std::move(views_);
    auto saved_offsets = std::move(offsets_);
    auto saved_choices = std::move(choices_);
    auto saved_forced = std::move(forced_);
    const int saved_level = level_;
    const std::string saved_fn = fn_;
    fn_ = f.name;
    views_.clear(), offsets_.clear(), choices_.clear(), forced_.clear();
    std::ostringstream o;
    o << gtype(f.ret) << " " << name << "(";
    std::size_t b = 0;
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      const auto& p = f.params[i];
      o << (i ? ", " : "");
      if (p.type.pointer) {
        views_[p.name] = buffers.at(b++);
        o << "uint " << rename(p.name) << "_off";
      } else {
        o << (p.type.reference && !p.type.is_const ? "inout " : "") << gtype(p.type) << " " << rename(p.name);
      }
    }
    o << ") ";
    level_ = 0;
    o << stmt(f.body);
    helper_texts_.push_back(o.str());
    views_ = std::move(saved_views), offsets_ = std::move(saved_offsets), level_ = saved_level, fn_ = saved_fn;
    choices_ = std::move(saved_choices), forced_ = std::move(saved_forced);
    return name;
  }

  // A pointer expression (p, p + n, n + p, p - n, nested): the buffer it points into and the offset
  // expression (at least "0u").
  bool pointer_arg(const Expr& e, std::string* buffer, std::string* offset) {
    if (e.kind == Expr::Kind::Cast && e.type.pointer) return pointer_arg(e.args[0], buffer, offset);  // Note [Vector types]
    if (e.kind == Expr::Kind::Binary && (e.op == "+" || e.op == "-") && e.type.pointer) {
      const bool left = e.args[0].type.pointer;
      if (!left && e.op == "-") return false;
      if (!pointer_arg(e.args[left ? 0 : 1], buffer, offset)) return false;
      *offset = "(" + *offset + " " + e.op + " " + in_buffer_units(e.type, *buffer, as_uint(e.args[left ? 1 : 0]), e.loc) + ")";
      return true;
    }
    if (!pointer_of(e, buffer, offset)) return false;
    if (offset->empty()) *offset = "0u";
    return true;
  }

  // n elements of a pointer to `pointee` as elements of `buffer` (offsets are kept in those: Note [Vector types]).
  std::string in_buffer_units(const Type& pointee, const std::string& buffer, const std::string& n, const Loc& loc) {
    const auto bt = buffer_types_.find(buffer);
    const std::uint32_t sv = elem_bytes(pointee), sb = bt != buffer_types_.end() ? elem_bytes(bt->second) : sv;
    if (sv == sb) return n;
    if (sv % sb != 0) {
      error(loc, "pointer arithmetic on a '" + pointee.c_name + "' in units smaller than its buffer's elements");
      return n;
    }
    return "(" + n + " * " + std::to_string(sv / sb) + "u)";
  }

  std::string indent() const { return std::string(2 * static_cast<std::size_t>(level_), ' '); }

  // The buffer a pointer variable (parameter or view) points into, and its element offset ("" when none).
  bool pointer_of(const Expr& e, std::string* buffer, std::string* offset) {
    if (e.kind == Expr::Kind::Var && e.type.array && shared_names_.contains(fn_ + "/" + e.name)) {
      *buffer = var_name(e.name), *offset = "";  // a __shared__ array (a GLSL global) passed to a helper
      return true;
    }
    if (e.kind != Expr::Kind::Var || !e.type.pointer) return false;
    if (auto v = views_.find(e.name); v != views_.end()) {
      *buffer = v->second, *offset = rename(e.name) + "_off";
      if (auto c = choices_.find(e.name); c != choices_.end()) {  // Note [Views chosen by ?:]: only with its arm chosen
        const auto f = forced_.find(e.name);
        if (f == forced_.end()) return false;
        if (f->second == 1) *buffer = c->second.second;
      }
      return true;
    }
    if (!buffers_.contains(e.name)) return false;
    *buffer = rename(e.name);
    auto o = offsets_.find(e.name);
    *offset = o != offsets_.end() ? o->second : "";
    return true;
  }

  std::string as_uint(const Expr& e) {
    if (e.kind == Expr::Kind::IntLit && static_cast<std::int64_t>(e.ival) >= 0 && e.ival <= 0xffffffffu) return std::to_string(e.ival) + "u";
    return e.type.scalar == Scalar::U32 ? ex(e) : "uint(" + ex(e) + ")";
  }

  std::string literal(const Expr& e) {
    char buf[64];
    switch (e.type.scalar) {
      case Scalar::I32: {
        const auto v = static_cast<std::int32_t>(e.ival);
        if (v == INT32_MIN) return "int(0x80000000u)";
        return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
      }
      case Scalar::U32: return std::to_string(static_cast<std::uint32_t>(e.ival)) + "u";
      case Scalar::I64: {
        const auto v = static_cast<std::int64_t>(e.ival);
        if (v == INT64_MIN) return "int64_t(0x8000000000000000ul)";
        return v < 0 ? "(" + std::to_string(v) + "l)" : std::to_string(v) + "l";
      }
      case Scalar::U64: return std::to_string(e.ival) + "ul";
      default: break;
    }
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(e.ival));
    return buf;
  }

  std::string float_literal(double d) {
    const float f = static_cast<float>(d);
    if (std::isnan(f)) return "uintBitsToFloat(0x7fc00000u)";
    if (std::isinf(f)) return f > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return f < 0 || std::signbit(f) ? "(" + s + ")" : s;
  }

  std::string call(const Expr& e) {
    std::vector<std::string> a;
    if (e.name == "__shfl_xor_sync" || e.name == "__shfl_down_sync") {
      subgroup_ = true;
      const bool x = e.name == "__shfl_xor_sync";
      (x ? shuffle_ : shuffle_down_) = true;
      if (x && is64(e.args.at(1).type.scalar)) {  // two 32-bit shuffles (64-bit ones need shaderSubgroupExtendedTypes)
        int64_ = shuffle64_ = true;
        return std::string(e.args[1].type.scalar == Scalar::I64 ? "int64_t(" : "(") + "decy_shfl_xor64(uint64_t(" + bare(ex(e.args[1])) + "), " +
               as_uint(e.args.at(2)) + "))";
      }
      return std::string(x ? "subgroupShuffleXor(" : "decy_shfl_down(") + ex(e.args.at(1)) + ", " + as_uint(e.args.at(2)) + ")";
    }
    if (e.name == "__syncthreads_or") {  // CUDA's barrier (as __syncthreads) and an OR of the block's predicates
      sync_or_ = true;
      return "decy_syncthreads_or(" + bare(ex(e.args.at(0))) + ")";
    }
    if (e.name == "__shfl_sync") {  // lane srcLane % 32 in CUDA: % gl_SubgroupSize here (the same on a subgroup of 32)
      subgroup_ = shuffle_ = true;
      return "subgroupShuffle(" + bare(ex(e.args.at(1))) + ", " + as_uint(e.args.at(2)) + " & (gl_SubgroupSize - 1u))";
    }
    if (e.name == "__ldcs") {  // a streaming load: the load (the cache hint has no Vulkan counterpart)
      Expr load, zero;
      zero.kind = Expr::Kind::IntLit, zero.type.scalar = Scalar::I32, zero.loc = e.loc;
      load.kind = Expr::Kind::Index, load.type = e.type, load.loc = e.loc;
      load.args.push_back(e.args.at(0)), load.args.push_back(zero);
      return ex(load);
    }
    if (e.name == "__fdividef") return "(" + ex(e.args.at(0)) + " / " + ex(e.args.at(1)) + ")";
    if (auto r = kRounded.find(e.name); r != kRounded.end()) {
      rounded_.insert(e.name);
      return "decy" + e.name.substr(1) + "(" + bare(ex(e.args.at(0))) + ", " + bare(ex(e.args.at(1))) + ")";
    }
    if (e.name == "__float2int_rn") return "int(roundEven(" + bare(ex(e.args.at(0))) + "))";
    if (e.name == "sincosf" || e.name == "__sincosf") {
      sincos_ = true;
      return "decy_sincos(" + bare(ex(e.args.at(0))) + ", " + bare(ex(e.args.at(1))) + ", " + bare(ex(e.args.at(2))) + ")";
    }
    if (e.name == "__decy_f16_to_f32") return "unpackHalf2x16(uint(" + bare(ex(e.args.at(0))) + ")).x";  // exact
    if (e.name == "__decy_f32_to_f16") {
      f16_ = true;
      return "decy_f32_to_f16(" + bare(ex(e.args.at(0))) + ")";
    }
    for (const Function* f : c_.helpers) {
      if (f->name != e.name) continue;
      std::vector<std::string> buffers, args;
      for (std::size_t i = 0; i < e.args.size() && i < f->params.size(); ++i) {
        if (!f->params[i].type.pointer) {
          args.push_back(ex(e.args[i]));
          continue;
        }
        std::string buffer, offset;
        if (!pointer_arg(e.args[i], &buffer, &offset)) {
          error(e.loc, "pointer argument " + std::to_string(i + 1) + " of '" + e.name + "' that is not a parameter's buffer plus an offset");
          return "0";
        }
        buffers.push_back(buffer), args.push_back(bare(offset));
      }
      std::string s = helper(*f, buffers) + "(";
      for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      return s + ")";
    }
    std::string name = rename(e.name);
    if (auto m = kMath.find(e.name); m != kMath.end()) name = m->second;
    std::string s = name + "(";
    for (std::size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + ex(e.args[i]);
    return s + ")";
  }

  std::string ex(const Expr& e) {
    std::string buffer, offset;
    switch (e.kind) {
      case Expr::Kind::Var:
        if (e.type.pointer) {
          error(e.loc, "pointer '" + e.name + "' used as a value (only indexed, offset by += / -=, or viewed)");
          return "0";
        }
        return var_name(e.name);
      case Expr::Kind::Builtin:
        if (e.name.find("Subgroup") != std::string::npos) subgroup_ = true;
        return e.name;
      case Expr::Kind::IntLit: return literal(e);
      case Expr::Kind::BoolLit: return e.ival ? "true" : "false";
      case Expr::Kind::FloatLit: return float_literal(e.fval);
      case Expr::Kind::Unary:
        if (pointer_of(e.args[0], &buffer, &offset)) return pointer_step(e, offset, e.op + offset);
        if ((e.op == "++" || e.op == "--") && small(e.args[0].type.scalar)) return refuse16(e);
        return "(" + e.op + ex(e.args[0]) + ")";
      case Expr::Kind::Postfix:
        if (pointer_of(e.args[0], &buffer, &offset)) return pointer_step(e, offset, offset + e.op);
        if (small(e.args[0].type.scalar)) return refuse16(e);
        return "(" + ex(e.args[0]) + e.op + ")";
      case Expr::Kind::Binary: return binary(e);
      case Expr::Kind::Cond: return "(" + ex(e.args[0]) + " ? " + ex(e.args[1]) + " : " + ex(e.args[2]) + ")";
      case Expr::Kind::Call: return call(e);
      case Expr::Kind::Index: {
        const std::string ref = element(e);
        if (small(e.type.scalar) && e.args[0].type.pointer) return std::string(glsl_type(e.type.scalar)) + "(" + ref + ")";
        return ref;
      }
      case Expr::Kind::Field: return ex(e.args[0]) + "." + (e.args[0].type.record != nullptr ? rename(e.name) : e.name);  // Note [Vector types]
      case Expr::Kind::Null:
        error(e.loc, "nullptr outside a test 'p == nullptr' / 'p != nullptr' of a pointer parameter");
        return "0";
      case Expr::Kind::Cast:
        if (e.type.pointer) {
          error(e.loc, "a pointer cast used as a value (only indexed, or a view's initializer)");
          return "0";
        }
        if (e.args[0].type.pointer) {  // an address: the byte offset in the binding (Note [Vector types])
          if (!pointer_arg(e.args[0], &buffer, &offset)) {
            error(e.loc, "the address of something that is not a parameter's buffer plus an offset");
            return "0";
          }
          const auto bt = buffer_types_.find(buffer);
          const std::uint32_t sb = bt != buffer_types_.end() ? elem_bytes(bt->second) : 4;
          if (is64(e.type.scalar)) int64_ = true;
          return "(" + gtype(e.type) + "(" + bare(offset) + ") * " + std::to_string(sb) + (is64(e.type.scalar) ? "ul)" : "u)");
        }
        if (is64(e.type.scalar)) {
          int64_ = true;
          // A 64-bit conversion of the workgroup size (a specialization constant) would be an
          // OpSpecConstantOp UConvert, which SPIR-V before 1.4 refuses: read it through a function.
          std::string in = ex(e.args[0]);
          for (std::size_t at; (at = in.find("gl_WorkGroupSize")) != std::string::npos;)
            in.replace(at, 16, "decy_workgroup_size()"), workgroup_fn_ = true;
          return std::string(glsl_type(e.type.scalar)) + "(" + in + ")";
        }
        if (e.type.scalar == Scalar::U16) return "(uint(" + bare(ex(e.args[0])) + ") & 0xffffu)";
        if (e.type.scalar == Scalar::I16) return "bitfieldExtract(int(" + bare(ex(e.args[0])) + "), 0, 16)";
        if (e.type.scalar == Scalar::U8) return "(uint(" + bare(ex(e.args[0])) + ") & 0xffu)";
        if (e.type.scalar == Scalar::I8) return "bitfieldExtract(int(" + bare(ex(e.args[0])) + "), 0, 8)";
        return std::string(glsl_type(e.type.scalar)) + "(" + ex(e.args[0]) + ")";
    }
    return "0";
  }

  // An element of a buffer or an array, as an lvalue (16-bit buffer elements unwidened).
  std::string element(const Expr& e) {
    std::string buffer, offset;
    const Expr& i = e.args[1];
    const std::string idx = is64(i.type.scalar) ? "uint(" + ex(i) + ")" : ex(i);
    const Expr& base = e.args[0];
    if (base.kind == Expr::Kind::Var && choices_.contains(base.name) && !forced_.contains(base.name)) {  // a load: either buffer
      std::string arms[2];
      for (int arm = 0; arm < 2; ++arm) forced_[base.name] = arm, arms[arm] = element(e);
      forced_.erase(base.name);
      return "(" + choices_.at(base.name).first + " ? " + arms[0] + " : " + arms[1] + ")";
    }
    if (base.type.pointer && (pointer_of(base, &buffer, &offset) || pointer_arg(base, &buffer, &offset))) {
      if (small(e.type.scalar)) (byte(e.type.scalar) ? storage8_ : storage16_) = true;
      const auto bt = buffer_types_.find(buffer);
      if (bt == buffer_types_.end() || stype(bt->second) == stype(e.type))
        return buffer + "[" + (offset.empty() ? idx : offset + " + " + as_uint(i)) + "]";
      // Note [Vector types]: another element type: the alias of the same binding, at offset * sB / sV.
      const std::string t = stype(e.type);
      if (e.type.record != nullptr) records_[e.type.record->name] = e.type.record;
      aliases_[buffer].insert(t);
      const std::uint32_t sv = elem_bytes(e.type), sb = elem_bytes(bt->second);
      std::string first;
      if (!offset.empty() && offset != "0u")
        first = sb % sv == 0 ? "(" + offset + " * " + std::to_string(sb / sv) + "u)" : "((" + offset + " * " + std::to_string(sb) + "u) / " + std::to_string(sv) + "u)";
      return buffer + "_" + t + "[" + (first.empty() ? idx : first + " + " + as_uint(i)) + "]";
    }
    if (e.args[0].kind == Expr::Kind::Var && e.args[0].type.array) return var_name(e.args[0].name) + "[" + idx + "]";
    error(e.loc, "indexing something that is not a parameter's buffer, a view or an array");
    return "0";
  }

  std::string refuse16(const Expr& e) {
    const Scalar s = e.args[0].type.scalar;
    error(e.loc, "'" + e.op + "' on a" + std::string(byte(s) ? "n 8" : " 16") + "-bit value (its wrap-around is not kept: Note [16-bit values])");
    return "0";
  }

  std::string pointer_step(const Expr& e, const std::string& offset, std::string text) {
    if (offset.empty()) error(e.loc, "pointer step of '" + e.args[0].name + "'");
    return "(" + text + ")";
  }

  // Note [Optional buffers]: `p != nullptr` / `p == nullptr` (also `if (p)`) on a pointer parameter (or a
  // helper's pointer parameter or a view, which point into one) reads a push constant decy_has_<p>, a uint
  // after the scalar parameters, one per such buffer in parameter order: 1 when the host binds p's data, 0
  // for CUDA's nullptr (the host still binds a buffer at p's binding, any one: Vulkan needs a descriptor).
  std::string null_test(const Expr& e) {
    const Expr& p = e.args[0].kind == Expr::Kind::Null ? e.args[1] : e.args[0];
    std::string buffer, offset;
    if (p.kind == Expr::Kind::Null || !pointer_of(p, &buffer, &offset)) {
      error(e.loc, "nullptr compared with something that is not a pointer parameter or a view of one");
      return "false";
    }
    optional_.insert(buffer);
    return "(decy_pc.decy_has_" + buffer + (e.op == "==" ? " == 0u)" : " != 0u)");
  }

  std::string binary(const Expr& e) {
    std::string buffer, offset;
    const Expr &l = e.args[0], &r = e.args[1];
    if ((e.op == "==" || e.op == "!=") && (l.kind == Expr::Kind::Null || r.kind == Expr::Kind::Null)) return null_test(e);
    if (pointer_of(l, &buffer, &offset)) {
      if ((e.op == "+=" || e.op == "-=") && !offset.empty())
        return "(" + offset + " " + e.op + " " + in_buffer_units(l.type, buffer, as_uint(r), e.loc) + ")";
      error(e.loc, "pointer arithmetic '" + e.op + "' outside p += n, p -= n and a view's initializer");
      return "0";
    }
    const bool compound = e.op.size() >= 2 && e.op.back() == '=' && e.op != "==" && e.op != "!=" && e.op != "<=" && e.op != ">=";
    if ((compound || e.op == "=") && l.kind == Expr::Kind::Index && l.args[0].kind == Expr::Kind::Var && choices_.contains(l.args[0].name) &&
        !forced_.contains(l.args[0].name)) {
      error(e.loc, "a store through '" + l.args[0].name + "' (chosen by ?:) inside an expression (Note [Views chosen by ?:])");
      return "0";
    }
    if (small(l.type.scalar) && compound) return refuse16(e);
    if (small(l.type.scalar) && e.op == "=" && l.kind == Expr::Kind::Index && l.args[0].type.pointer)
      return "(" + element(l) + " = " + storage_type(l.type.scalar) + "(" + bare(ex(r)) + "))";  // a 16-bit store narrows
    if (compound && e.op != "<<=" && e.op != ">>=" && l.type.scalar != r.type.scalar && !l.type.pointer) {
      if (!is_int(l.type.scalar) || !is_int(r.type.scalar)) {
        error(e.loc, "compound assignment '" + e.op + "' of " + r.type.c_name + " into " + l.type.c_name + " (write the conversion)");
        return "0";
      }
      // C divides in the common type: a wider or (as wide) unsigned right side makes it not l's type, and
      // `int x; x /= u` is then not a signed division by int(u).
      const bool is_signed = l.type.scalar == Scalar::I32 || l.type.scalar == Scalar::I64;
      const bool r_signed = r.type.scalar == Scalar::I32 || r.type.scalar == Scalar::I64;
      const bool other = scalar_bytes(r.type.scalar) > scalar_bytes(l.type.scalar) ||
                         (scalar_bytes(r.type.scalar) == scalar_bytes(l.type.scalar) && is_signed && !r_signed);
      if ((e.op == "/=" || e.op == "%=") && other) {
        error(e.loc, "compound assignment '" + e.op + "' of " + r.type.c_name + " into " + l.type.c_name + " (C divides in the common type: write the conversion)");
        return "0";
      }
      return "(" + ex(l) + " " + e.op + " " + glsl_type(l.type.scalar) + "(" + ex(r) + "))";
    }
    if (is64(e.type.scalar)) int64_ = true;
    // Note [Signed remainder]: glslang makes a signed % an OpSMod (the sign of the divisor); C's has the sign
    // of the dividend (-7 % 3 == -1): a - b * (a / b), OpSDiv truncating as C's /.
    const bool srem = (e.op == "%" || e.op == "%=") && (l.type.scalar == Scalar::I32 || l.type.scalar == Scalar::I64);
    if (srem) {
      (l.type.scalar == Scalar::I64 ? srem64_ : srem32_) = true;
      if (e.op == "%") return "decy_srem(" + bare(ex(l)) + ", " + bare(ex(r)) + ")";
      if (side_effects(l)) {
        error(e.loc, "'%=' on an lvalue with side effects");
        return "0";
      }
      const std::string lhs = ex(l);
      return "(" + lhs + " = decy_srem(" + bare(lhs) + ", " + bare(ex(r)) + "))";
    }
    return "(" + ex(l) + " " + e.op + " " + ex(r) + ")";
  }

  static bool side_effects(const Expr& e) {
    if (e.kind == Expr::Kind::Call || e.kind == Expr::Kind::Postfix || (e.kind == Expr::Kind::Unary && (e.op == "++" || e.op == "--")) ||
        (e.kind == Expr::Kind::Binary && e.op.back() == '=' && e.op != "==" && e.op != "!=" && e.op != "<=" && e.op != ">="))
      return true;
    for (const auto& a : e.args)
      if (side_effects(a)) return true;
    return false;
  }

  // A local pointer: `T* v = p + n;` -> `uint v_off = p_off + uint(n);`, v indexes p's buffer.
  std::string view(const VarDecl& d) {
    std::string buffer, offset;
    if (!pointer_arg(d.init, &buffer, &offset)) {
      if (std::string v = choice_view(d); !v.empty()) return v;
      error(d.loc, "pointer variable '" + d.name + "' that is not a parameter's buffer plus an offset");
      return "";
    }
    views_[d.name] = buffer;
    return "uint " + rename(d.name) + "_off = " + bare(offset) + ";";
  }

  // Note [Views chosen by ?:]: `T* v = (c ? p : q) + n;` with p and q in different buffers (of one element
  // type) is a view of either: `bool v_sel = c; uint v_off = v_sel ? p's offset : q's;`. A load through v is
  // `(v_sel ? p[..] : q[..])`; an expression statement that stores through v is emitted twice, under
  // `if (v_sel)` with every access to v in p's buffer and under `else` in q's (its right side runs once).
  // A store through v inside a larger expression is refused.
  static Expr pick_arm(const Expr& e, int arm, Expr* cond, bool* found) {
    if (e.kind == Expr::Kind::Cond && e.type.pointer) {
      *cond = e.args[0], *found = true;
      return e.args[1 + arm];
    }
    Expr out = e;
    if ((e.kind == Expr::Kind::Binary || e.kind == Expr::Kind::Cast) && e.type.pointer)
      for (auto& a : out.args)
        if (a.type.pointer) a = pick_arm(a, arm, cond, found);
    return out;
  }

  std::string choice_view(const VarDecl& d) {
    Expr cond;
    bool found = false;
    const Expr a = pick_arm(d.init, 0, &cond, &found), b = pick_arm(d.init, 1, &cond, &found);
    std::string ba, oa, bb, ob;
    if (!found || side_effects(cond) || !pointer_arg(a, &ba, &oa) || !pointer_arg(b, &bb, &ob)) return "";
    const auto ta = buffer_types_.find(ba), tb = buffer_types_.find(bb);
    if (ta == buffer_types_.end() || tb == buffer_types_.end() || stype(ta->second) != stype(tb->second)) {
      error(d.loc, "pointer variable '" + d.name + "' chosen by ?: between buffers of different element types");
      return "";
    }
    const std::string sel = rename(d.name) + "_sel";
    views_[d.name] = ba;
    choices_[d.name] = {sel, bb};
    return "bool " + sel + " = " + bare(ex(cond)) + ";\n" + indent() + "uint " + rename(d.name) + "_off = " + sel + " ? " + bare(oa) +
           " : " + bare(ob) + ";";
  }

  // The view chosen by ?: that an expression statement stores through ("" when none; refused when several).
  std::string stored_choice(const Expr& e) {
    std::string found;
    const auto walk = [&](const auto& self, const Expr& x) -> void {
      const bool store = x.kind == Expr::Kind::Postfix || (x.kind == Expr::Kind::Unary && (x.op == "++" || x.op == "--")) ||
                         (x.kind == Expr::Kind::Binary && x.op.back() == '=' && x.op != "==" && x.op != "!=" && x.op != "<=" && x.op != ">=");
      if (store && x.args[0].kind == Expr::Kind::Index && x.args[0].args[0].kind == Expr::Kind::Var &&
          choices_.contains(x.args[0].args[0].name)) {
        const std::string& v = x.args[0].args[0].name;
        if (!found.empty() && found != v) error(x.loc, "one statement storing through two pointers chosen by ?:");
        found = v;
      }
      for (const auto& a : x.args) self(self, a);
    };
    walk(walk, e);
    return found;
  }

  // One declaration statement without indentation or final newline (also a for loop's init); several
  // declarators on lines of their own.
  std::string decl(const Stmt& s) {
    std::string out;
    for (const auto& d : s.decls) {
      if (d.shared) continue;  // a global (collect_shared)
      if (is64(d.type.scalar)) int64_ = true;
      std::string one;
      if (d.type.pointer) {
        one = view(d);
      } else {
        one = gtype(d.type) + " " + rename(d.name) + (d.type.array ? "[" + std::to_string(d.type.array) + "]" : "");
        if (d.has_init) one += " = " + bare(ex(d.init));
        one += ";";
      }
      out += (out.empty() ? "" : "\n" + indent()) + one;
    }
    return out;
  }

  std::string stmt(const Stmt& s) {
    std::string in = indent();
    std::ostringstream o;
    switch (s.kind) {
      case Stmt::Kind::Block:
        o << "{\n";
        ++level_;
        for (const auto& b : s.body) o << stmt(b);
        --level_;
        o << indent() << "}\n";
        return level_ == 0 ? o.str() : in + o.str();
      case Stmt::Kind::Decl: {
        const std::string d = decl(s);
        return d.empty() ? "" : in + d + "\n";
      }
      case Stmt::Kind::Expr: {
        if (s.exprs[0].kind == Expr::Kind::Call && s.exprs[0].name == "__syncthreads") return in + "groupMemoryBarrier();\n" + in + "barrier();\n";
        const std::string v = stored_choice(s.exprs[0]);
        if (v.empty()) return in + bare(ex(s.exprs[0])) + ";\n";
        std::string arms[2];  // Note [Views chosen by ?:]
        for (int arm = 0; arm < 2; ++arm) {
          forced_[v] = arm;
          arms[arm] = in + "  " + bare(ex(s.exprs[0])) + ";\n";
        }
        forced_.erase(v);
        return in + "if (" + choices_.at(v).first + ")\n" + in + "{\n" + arms[0] + in + "}\n" + in + "else\n" + in + "{\n" + arms[1] + in + "}\n";
      }
      case Stmt::Kind::If:
        o << in << "if (" << bare(ex(s.exprs[0])) << ")\n" << nested(s.body[0]);
        if (s.body.size() > 1) o << in << "else\n" << nested(s.body[1]);
        return o.str();
      case Stmt::Kind::For: {
        std::string init;
        const Stmt& i = s.body[0];
        if (i.kind == Stmt::Kind::Decl) {
          if (i.decls.size() > 1) error(i.loc, "a for loop declaring several variables");
          init = decl(i);
        } else if (i.kind == Stmt::Kind::Expr) {
          init = bare(ex(i.exprs[0])) + ";";
        } else {
          init = ";";
        }
        o << in << "for (" << init << " " << bare(ex(s.exprs[0])) << "; " << bare(ex(s.exprs[1])) << ")\n" << nested(s.body[1]);
        return o.str();
      }
      case Stmt::Kind::While: return in + "while (" + bare(ex(s.exprs[0])) + ")\n" + nested(s.body[0]);
      case Stmt::Kind::Do: return in + "do\n" + nested(s.body[0]) + in + "while (" + bare(ex(s.exprs[0])) + ");\n";
      case Stmt::Kind::Return: return in + "return" + (s.exprs.empty() ? "" : " " + bare(ex(s.exprs[0]))) + ";\n";
      case Stmt::Kind::Break: return in + "break;\n";
      case Stmt::Kind::Continue: return in + "continue;\n";
      case Stmt::Kind::Empty: return "";
    }
    return "";
  }

  // A loop or branch body: always braced.
  std::string nested(const Stmt& s) {
    if (s.kind == Stmt::Kind::Block) return stmt(s);
    std::string in = indent();
    ++level_;
    std::string body = stmt(s);
    --level_;
    return in + "{\n" + body + in + "}\n";
  }

  const Checked& c_;
  Glsl& out_;
  std::map<std::string, std::uint32_t> buffers_;   // pointer parameter -> binding
  std::map<std::string, std::string> offsets_;     // pointer parameter it offsets -> offset variable
  std::map<std::string, std::string> views_;       // local pointer -> the buffer it points into
  std::vector<std::pair<VarDecl, std::string>> shared_;  // with their GLSL names
  std::map<std::string, std::string> shared_names_;      // "function/name" -> GLSL name
  std::string fn_;                                       // the function being emitted
  std::set<std::string> emitted_;              // helpers emitted (Note [Helpers with pointer parameters])
  std::vector<std::string> helper_texts_;      // in completion order: callees first
  int level_ = 0;
  std::set<std::string> rounded_;              // __fadd_rn ... used (Note [Correctly rounded intrinsics])
  std::map<std::string, Type> buffer_types_;                 // buffer (GLSL name) -> its kernel parameter's type
  std::map<std::string, std::set<std::string>> aliases_;     // buffer -> element types it is also read as
  std::map<std::string, std::shared_ptr<const Record>> records_;  // structs declared (Note [Structs of scalars])
  std::map<std::string, std::pair<std::string, std::string>> choices_;  // view chosen by ?: -> (its v_sel, the other buffer)
  std::map<std::string, int> forced_;                                  // such views with an arm chosen (0: views_'s buffer)
  std::set<std::string> optional_;             // buffers tested against nullptr (Note [Optional buffers])
  bool sincos_ = false;
  bool shuffle64_ = false, sync_or_ = false;
  bool subgroup_ = false, shuffle_ = false, shuffle_down_ = false, int64_ = false, storage16_ = false, storage8_ = false, f16_ = false, workgroup_fn_ = false, srem32_ = false, srem64_ = false;
};

}  // namespace

Glsl emit_glsl(const Checked& c, const std::string& source) {
  Glsl out;
  if (c.kernel == nullptr || !c.errors.empty()) {
    out.errors = c.errors;
    return out;
  }
  Emitter e(c, out);
  out.text = e.run(source);
  if (!out.errors.empty()) out.text.clear();  // never a partial translation
  out.subgroups = out.text.find("GL_KHR_shader_subgroup_basic") != std::string::npos;
  return out;
}

}  // namespace decy
