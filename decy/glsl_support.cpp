// GLSL names, types and the support functions a generated shader may need (glsl_support.h); the notes on
// how CUDA's types and intrinsics map live beside their code here, glsl.cpp cites them.
#include "glsl_support.h"

#include <sstream>

namespace decy::glsl {

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
    case Scalar::F64: return "double";  // Note [Double math]
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
  std::string name = t.scalar == Scalar::I32 ? "ivec" : t.scalar == Scalar::U32 ? "uvec" : "vec";
  name += static_cast<char>('0' + t.lanes);  // 2 or 4
  return name;
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
    case Scalar::U64: case Scalar::I64: case Scalar::F64: return 8;
    default: return 4;
  }
}

std::uint32_t scalar_bytes(Scalar s) { return s == Scalar::I64 || s == Scalar::U64 || s == Scalar::F64 ? 8 : 4; }
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
// function whose result is `precise`. Vulkan promises only 2.5 ULP for a division, and NVIDIA's driver
// gives less than correct rounding (32 of 1000 quotients of DecyVulkanGpu.ProjectRepeatPenaltyMatchesTheCpu
// differed on the H200, none on lavapipe). So __fdiv_rn takes the driver's quotient q0 and returns, of q0
// and the six floats next to it (3 ULP each way), the one whose residual |a - b q| is smallest: the float
// nearest a / b, which is the correctly rounded quotient (a quotient of floats is never a rounding
// midpoint). The residual is computed without an fma, which Vulkan does not promise to fuse (lavapipe's
// is not fused): b q exactly as p + err by Dekker's splitting (each `precise` operation correctly rounded),
// then (a - p) - err. Where a, b or q0 is outside [1e-30, 1e30] in magnitude (zero, infinite, NaN, or the
// splitting's products could overflow or underflow) the driver's quotient is returned as it is.
// __float2int_rn is
// (GLSL leaves frexp of an infinity or NaN and an ldexp that overflows undefined).
const std::map<std::string, std::string> kRounded = {
    {"__fadd_rn", "+"}, {"__fsub_rn", "-"}, {"__fmul_rn", "*"}, {"__fdiv_rn", "/"},
    {"__dadd_rn", "+"}, {"__dsub_rn", "-"}, {"__dmul_rn", "*"}};  // the double ones: Note [Double math]

// Note [sincosf]: GLSL's sin and cos are bounded (absolute 2^-11) only on [-pi, pi], and a rope angle is up
// to the context length in radians. decy_sincos reduces x by k = round(x / 2pi) first (Cody-Waite: 2pi =
// C1 + C2 + C3, C1 of 8 significant bits and C2 of 12, so k * C1 and k * C2 are exact for |k| < 2^12, |x|
// below ~25700; `precise` keeps the order), then takes sin and cos of the reduced angle.
const char* const kSincos =
    "\n// sincosf (Note [sincosf] in decy/glsl_support.cpp): reduce to [-pi, pi] (Cody-Waite), then sin and cos.\n"
    "void decy_sincos(float x, out float s, out float c) {\n"
    "  precise float k = roundEven(x * 0.159154937f);\n"
    "  precise float r = ((x - k * 6.28125f) - k * 0.00193500519f) - k * 3.01991605e-07f;\n"
    "  s = sin(r);\n  c = cos(r);\n}\n";

// Note [Double math]: GLSL has double arithmetic (shaderFloat64) but no double exp, log, pow, sin or cos.
// decy's are written with double + - * / only: exp by k = round(x / ln 2) (ln 2 in two parts, fdlibm's), a
// Taylor polynomial on |r| <= 0.35 (to r^14: remainder below 2^-60) and ldexp in two halves (so 2^1024 x a
// p below 1 stays finite: up to x = 709.78271289338397, C's last finite exp); log by frexp to m in
// [sqrt(1/2), sqrt(2)) (a subnormal x scaled by 2^54 first), 2 atanh((m - 1) / (m + 1)) to s^23; pow(b, y) = exp(y log b) (so a relative error
// of about |y ln b| x 2^-53 more than C's; b < 0 with an integer y by its parity, b = 0 and y = 0 as C;
// infinite or NaN arguments not C's special cases); sin and cos by k = round(x / (pi/2)) with pi/2 in three
// 33-bit parts and a fourth (fdlibm's: exact products for |k| < 2^20, so |x| below ~1.6e6) and Taylor polynomials on
// |r| <= pi/4 (to r^19 and r^20). Within a few ULP of C's (measured by decy's tests against std::) where the
// Vulkan implementation makes double + - * / correctly rounded, as lavapipe and NVIDIA's driver do; Vulkan
// itself promises double arithmetic only single precision's accuracy.
const char* const kDoubleMath =
    "\n// C's double exp, log, pow, sin, cos (Note [Double math] in decy/glsl_support.cpp).\n"
    "double decy_exp64(double x) {\n"
    "  if (!(x <= 709.78271289338397lf)) return x != x ? x : 1.0lf / 0.0lf;  // the largest x with a finite exp\n"
    "  if (x < -745.2lf) return 0.0lf;\n"
    "  precise double k = roundEven(x * 1.4426950408889634lf);\n"
    "  precise double r = (x - k * 0.6931471803691238lf) - k * 1.9082149292705877e-10lf;\n"
    "  const double inv[14] = double[14](1.0lf, 0.5lf, 0.3333333333333333lf, 0.25lf, 0.2lf, 0.16666666666666666lf, 0.14285714285714285lf, 0.125lf, 0.1111111111111111lf, 0.1lf, 0.09090909090909091lf, 0.08333333333333333lf, 0.07692307692307693lf, 0.07142857142857142lf);\n"
    "  double p = 1.0lf;\n"
    "  for (int i = 13; i >= 0; --i) p = 1.0lf + r * p * inv[i];\n"
    "  const int ki = int(k);\n"
    "  return ldexp(ldexp(p, ki / 2), ki - ki / 2);\n}\n"
    "double decy_log64(double x) {\n"
    "  if (!(x > 0.0lf)) return x == 0.0lf ? -1.0lf / 0.0lf : 0.0lf / 0.0lf;\n"
    "  const bool sub = x < 2.2250738585072014e-308lf;  // a subnormal: frexp's result is undefined there\n"
    "  int e;\n  double m = frexp(sub ? x * 18014398509481984.0lf : x, e);\n"
    "  if (sub) e = e - 54;\n"
    "  if (m < 0.70710678118654752lf) m = m * 2.0lf, e = e - 1;\n"
    "  precise double s = (m - 1.0lf) / (m + 1.0lf);\n  precise double s2 = s * s;\n"
    "  const double c[12] = double[12](1.0lf, 0.3333333333333333lf, 0.2lf, 0.14285714285714285lf, 0.1111111111111111lf, 0.09090909090909091lf, 0.07692307692307693lf, 0.06666666666666667lf, 0.058823529411764705lf, 0.05263157894736842lf, 0.047619047619047616lf, 0.043478260869565216lf);\n"
    "  double p = c[11];\n"
    "  for (int i = 10; i >= 0; --i) p = c[i] + s2 * p;\n"
    "  precise double de = double(e);\n"
    "  return de * 0.6931471803691238lf + (de * 1.9082149292705877e-10lf + 2.0lf * s * p);\n}\n"
    "double decy_pow64(double b, double y) {\n"
    "  if (y == 0.0lf) return 1.0lf;\n"
    "  if (b == 0.0lf) return y > 0.0lf ? 0.0lf : 1.0lf / 0.0lf;\n"
    "  if (b > 0.0lf) return decy_exp64(y * decy_log64(b));\n"
    "  if (floor(y) != y) return 0.0lf / 0.0lf;\n"
    "  const double r = decy_exp64(y * decy_log64(-b));\n"
    "  return mod(y, 2.0lf) == 0.0lf ? r : -r;\n}\n"
    "// x = k pi/2 + r, |r| <= pi/4: sin(r) (q 0), cos(r) (q 1), then the quadrant's sign.\n"
    "double decy_sincos_q64(double x, int q) {\n"
    "  precise double k = roundEven(x * 0.63661977236758134lf);\n"
    "  precise double r = (((x - k * 1.5707963267341256lf) - k * 6.0771005063039660e-11lf) - k * 2.0222662487111665e-21lf) - k * 8.4784276603688996e-32lf;\n"
    "  precise double r2 = r * r;\n"
    "  const int quad = (int(k - 4.0lf * floor(k * 0.25lf)) + q) & 3;\n"
    "  const double sc[9] = double[9](0.0029239766081871343lf, 0.003676470588235294lf, 0.004761904761904762lf, 0.00641025641025641lf, 0.00909090909090909lf, 0.013888888888888888lf, 0.023809523809523808lf, 0.05lf, 0.16666666666666666lf);\n"
    "  const double cc[10] = double[10](0.002631578947368421lf, 0.0032679738562091504lf, 0.004166666666666667lf, 0.005494505494505495lf, 0.007575757575757576lf, 0.011111111111111112lf, 0.017857142857142856lf, 0.03333333333333333lf, 0.08333333333333333lf, 0.5lf);\n"
    "  double s = 1.0lf, c = 1.0lf;\n"
    "  for (int i = 0; i < 9; ++i) s = 1.0lf - s * r2 * sc[i];\n"
    "  for (int i = 0; i < 10; ++i) c = 1.0lf - c * r2 * cc[i];\n"
    "  s = s * r;\n"
    "  return quad == 0 ? s : quad == 1 ? c : quad == 2 ? -s : -c;\n}\n"
    "double decy_sin64(double x) { return decy_sincos_q64(x, 0); }\n"
    "double decy_cos64(double x) { return decy_sincos_q64(x, 1); }\n";

// Note [Half types]: CUDA's __half and __nv_bfloat16 (decy's builtins.cpp declares them as structs of their
// bits, with cuda_fp16.h's conversion, arithmetic and comparison functions and __half's operators) are
// their 16 bits in a uint, as the project's u16 f16 values (Note [16-bit values]): uint16_t buffer
// elements, 32-bit values. __half2 is its 32 bits (low half in bits 0-15), a uint buffer element. A half
// operation converts its operands to f32 exactly (unpackHalf2x16), operates in f32 and rounds once to f16
// (decy_f32_to_f16, to nearest even): for + - * / that is the f16 nearest the exact result, as CUDA's,
// since f32's 24 bits are at least 2 x 11 + 2 (double rounding is then innocuous; the division itself
// through decy_fdiv_rn, Vulkan's being inexact). __hneg flips the sign bit. bf16 -> f32 is a shift;
// f32 -> bf16 rounds to nearest even, a NaN becoming 0x7fff as CUDA's __float2bfloat16. Not mapped (a
// diagnostic by name): __hfma (one rounding of a*b+c would need more than f32), implicit conversions
// (CUDA's __half(float) and operator float), half arithmetic on bf16, and WGSL (no 16-bit elements there).
std::string warp32_functions(const std::string& t);

std::string support_functions(const SupportNeeds& n) {
  std::ostringstream out;
  for (const auto& name : n.rounded) {
    if (name == "__fdiv_rn") {
      out << "\n// a - b q, with b q exact as p + err (Dekker's splitting; Note [Correctly rounded intrinsics]).\n"
          << "float decy_div_residual(float a, float b, float q) {\n"
          << "  precise float p = b * q;\n"
          << "  precise float cb = 4097.0f * b;\n  precise float bh = cb - (cb - b);\n  precise float bl = b - bh;\n"
          << "  precise float cq = 4097.0f * q;\n  precise float qh = cq - (cq - q);\n  precise float ql = q - qh;\n"
          << "  precise float err = ((bh * qh - p) + bh * ql + bl * qh) + bl * ql;\n"
          << "  precise float r = (a - p) - err;\n  return r;\n}\n"
          << "\nfloat decy_fdiv_rn(float a, float b) {  // Note [Correctly rounded intrinsics]: the float nearest a / b\n"
          << "  precise float q0 = a / b;\n"
          << "  const float aa = abs(a), ab = abs(b), aq = abs(q0);\n"
          << "  if (!(aa >= 1.0e-30f && aa <= 1.0e30f && ab >= 1.0e-30f && ab <= 1.0e30f && aq >= 1.0e-30f && aq <= 1.0e30f)) return q0;\n"
          << "  float best = q0, best_r = abs(decy_div_residual(a, b, q0));\n"
          << "  for (int k = -3; k <= 3; ++k) {\n"
          << "    if (k == 0) continue;\n"
          << "    const float q = uintBitsToFloat(uint(int(floatBitsToUint(q0)) + k));\n"
          << "    const float r = abs(decy_div_residual(a, b, q));\n"
          << "    if (r < best_r) best = q, best_r = r;\n"
          << "  }\n"
          << "  return best;\n}\n";
      continue;
    }
    const char* t = name.starts_with("__d") ? "double" : "float";
    out << "\n" << t << " decy" << name.substr(1) << "(" << t << " a, " << t << " b) {  // Note [Correctly rounded intrinsics]\n  precise "
        << t << " r = a " << kRounded.at(name) << " b;\n  return r;\n}\n";
  }
  if (n.double_math) out << kDoubleMath;
  if (n.sincos) out << kSincos;
  if (n.workgroup_size) out << "\nuvec3 decy_workgroup_size() { return gl_WorkGroupSize; }\n";
  if (n.srem32) out << "\nint decy_srem(int a, int b) { return a - b * (a / b); }  // C's %: the sign of a\n";
  if (n.srem64) out << "\nint64_t decy_srem(int64_t a, int64_t b) { return a - b * (a / b); }\n";
  if (n.f32_to_f16)
    out << "\n// f32 -> f16 bits, round to nearest even (as PTX cvt.rn.f16.f32; packHalf2x16 leaves the rounding to the\n"
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
  if (n.half2)  // after decy_f32_to_f16 (n.half2 implies n.f32_to_f16)
    out << "\n// __half2 (Note [Half types]): low half in bits 0-15.\n"
        << "uint decy_half2(float lo, float hi) { return decy_f32_to_f16(lo) | (decy_f32_to_f16(hi) << 16u); }\n"
        << "uint decy_half2_both(float v) { const uint h = decy_f32_to_f16(v); return h | (h << 16u); }\n"
        << "uint decy_hadd2(uint a, uint b) { const vec2 x = unpackHalf2x16(a), y = unpackHalf2x16(b); return decy_half2(x.x + y.x, x.y + y.y); }\n"
        << "uint decy_hsub2(uint a, uint b) { const vec2 x = unpackHalf2x16(a), y = unpackHalf2x16(b); return decy_half2(x.x - y.x, x.y - y.y); }\n"
        << "uint decy_hmul2(uint a, uint b) { const vec2 x = unpackHalf2x16(a), y = unpackHalf2x16(b); return decy_half2(x.x * y.x, x.y * y.y); }\n";
  if (n.bf16)
    out << "\n// f32 -> bf16 bits, round to nearest even; a NaN becomes 0x7fff (CUDA's __float2bfloat16).\n"
        << "uint decy_f32_to_bf16(float f) {\n  const uint x = floatBitsToUint(f);\n"
        << "  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;\n  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;\n}\n";
  if (n.shuffle64)
    out << "\nuint64_t decy_shfl_xor64(uint64_t v, uint o) {\n  const uvec2 h = unpackUint2x32(v);\n"
      << "  return packUint2x32(uvec2(subgroupShuffleXor(h.x, o), subgroupShuffleXor(h.y, o)));\n}\n";
  if (n.sync_or)
    out << "\nshared uint decy_sync_or;\n\n// __syncthreads_or: a barrier (global and shared memory, as __syncthreads) and the OR of every thread's p.\n"
      << "int decy_syncthreads_or(int p) {\n  groupMemoryBarrier();\n  barrier();\n  if (gl_LocalInvocationIndex == 0u) decy_sync_or = 0u;\n"
      << "  memoryBarrierShared();\n  barrier();\n  if (p != 0) atomicOr(decy_sync_or, 1u);\n  memoryBarrierShared();\n  barrier();\n"
      << "  const uint r = decy_sync_or;\n  barrier();  // every thread has read it before a later call resets it\n  return int(r);\n}\n";
  if (n.shuffle_down)
    for (const char* t : {"float", "int", "uint"})
      out << "\n" << t << " decy_shfl_down(" << t << " v, uint d) {  // CUDA: lanes past the end keep their value\n  " << t
        << " r = subgroupShuffleDown(v, d);\n  return gl_SubgroupInvocationID + d < gl_SubgroupSize ? r : v;\n}\n";
  // Note [dp4a]: CUDA's __dp4a(a, b, c) on ints is c plus the dot product of a's and b's four signed bytes,
  // wrapping modulo 2^32. Here each byte is sign-extended by shifting it to the top and back (GLSL's >> on
  // int extends the sign), and the sum wraps as CUDA's: exact. (GL_EXT_integer_dot_product's dotPacked4x8
  // would be one instruction where the device has it; not used, so that every Vulkan 1.1 device runs this.)
  if (n.dp4a)
    out << "\nint decy_dp4a(int a, int b, int c) {\n  const ivec4 x = ivec4(a << 24, a << 16, a << 8, a) >> 24;\n"
        << "  const ivec4 y = ivec4(b << 24, b << 16, b << 8, b) >> 24;\n  return c + x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;\n}\n";
  // Note [byte_perm]: CUDA's __byte_perm(x, y, s) in its default mode: byte i of the result is byte
  // (s >> 4i) & 7 of the eight bytes y:x (x's four first); exact.
  if (n.byte_perm)
    out << "\nuint decy_byte_perm(uint x, uint y, uint s) {\n  uint r = 0u;\n  for (uint i = 0u; i < 4u; ++i) {\n"
        << "    const uint k = (s >> (4u * i)) & 7u;\n    const uint b = k < 4u ? (x >> (8u * k)) & 255u : (y >> (8u * (k - 4u))) & 255u;\n"
        << "    r |= b << (8u * i);\n  }\n  return r;\n}\n";
  // Note [erfcf]: GLSL has no erfc. decy_erfc is the Chebyshev-fitted form t * exp(-x^2 + P(t)), t = 1 / (1 +
  // |x| / 2) (Press et al., Numerical Recipes, erfcc: fractional error below 1.2e-7 everywhere), reflected
  // as 2 - erfc(-x) for x < 0; with GLSL's exp (not correctly rounded) a few ULP from CUDA's erfcf (4 ULP).
  // Kernels using it get contracts with bounds, not exact ones.
  if (n.erfc)
    out << "\nfloat decy_erfc(float x) {\n  const float z = abs(x), t = 1.0 / (1.0 + 0.5 * z);\n"
        << "  const float p = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 +\n"
        << "      t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));\n"
        << "  const float r = t * exp(p);\n  return x >= 0.0 ? r : 2.0 - r;\n}\n";
  for (const std::string& t : n.warp32) out << warp32_functions(t);
  if (n.ballot32)  // Note [Emulated warps]: each warp's word, reset, OR-ed into and read between barriers
    out << "\nshared uint decy_ballot_words[32];  // one per warp of CUDA's largest block\n\n"
        << "uint decy_ballot32(bool p) {\n  const uint w = gl_LocalInvocationIndex >> 5u;\n  barrier();\n"
        << "  if ((gl_LocalInvocationIndex & 31u) == 0u) decy_ballot_words[w] = 0u;\n  memoryBarrierShared();\n  barrier();\n"
        << "  if (p) atomicOr(decy_ballot_words[w], 1u << (gl_LocalInvocationIndex & 31u));\n  memoryBarrierShared();\n  barrier();\n"
        << "  return decy_ballot_words[w];\n}\n";
  return out.str();
}

// Note [Emulated warps]
// CUDA's warp is 32 threads; a Vulkan subgroup may be narrower (lavapipe: 8 on AVX2; its 1024-bit mode
// reports 32 but computed wrong shuffles when measured) or wider. With --warp32, warpSize is the literal 32
// and a shuffle is an exchange through a shared array indexed by gl_LocalInvocationIndex: a barrier (the
// previous exchange is read), each thread stores its value, a barrier, each reads its partner's (lane ^ o,
// lane + d or the lane asked for, inside its own warp of 32, as CUDA: out-of-warp partners give the
// thread's own value). Barriers make it valid only when every thread of the workgroup reaches every
// shuffle the same number of times - true of block reductions, false of a shuffle under `if (warp == 0)`;
// decy does not check this (the header says so). blockDim.x must be a multiple of 32, as the kernels'
// own lane arithmetic assumes. Values are exact (a copy), so results equal a 32-wide subgroup's.
std::string warp32_functions(const std::string& t) {
  const std::string a = "decy_warp_" + t, put = "decy_warp_put_" + t;
  std::ostringstream o;
  o << "\nshared " << t << " " << a << "[1024];  // Note [Emulated warps]: CUDA's largest block\n\n"
    << "void " << put << "(" << t << " v) {\n  barrier();\n  " << a << "[gl_LocalInvocationIndex] = v;\n"
    << "  memoryBarrierShared();\n  barrier();\n}\n\n"
    << t << " decy_warp_xor_" << t << "(" << t << " v, uint o) {\n  " << put << "(v);\n"
    << "  return o < 32u ? " << a << "[gl_LocalInvocationIndex ^ o] : v;\n}\n\n"
    << t << " decy_warp_down_" << t << "(" << t << " v, uint d) {\n  " << put << "(v);\n"
    << "  return (gl_LocalInvocationIndex & 31u) + d < 32u ? " << a << "[gl_LocalInvocationIndex + d] : v;\n}\n\n"
    << t << " decy_warp_idx_" << t << "(" << t << " v, int lane) {\n  " << put << "(v);\n"
    << "  return " << a << "[(gl_LocalInvocationIndex & ~31u) | (uint(lane) & 31u)];\n}\n";
  return o.str();
}

std::string warp32_shuffle(const std::string& kind, const std::string& t, const std::string& v, const std::string& arg) {
  return "decy_warp_" + kind + "_" + t + "(" + v + ", " + arg + ")";
}

}  // namespace decy::glsl
