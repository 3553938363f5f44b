// decy's stages on small inline CUDA snippets: parse (kernels, parameters, types), checks (every
// unsupported construct named with its line), codegen (the CUDA -> GLSL and CUDA -> WGSL mappings), and
// glslc accepting the GLSL output where glslc is found (the WGSL output runs under Dawn in
// decy_wgsl_test.cpp, its validator).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "check.h"
#include "glsl.h"
#include "parse.h"
#include "wgsl.h"
#include "wgsl_runner_test_support.h"

namespace decy {
namespace {

Glsl translate(const std::string& src, const std::string& kernel = "", const ParseOptions& o = {}) {
  const Module m = parse_source("snippet.cu", src, o);
  return emit_glsl(check(m, kernel), "snippet.cu");
}

std::string errors(const Glsl& g) {
  std::string s;
  for (const auto& e : g.errors) s += e.str() + "\n";
  return s;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// glslc accepts the shader (skipped where the build found no glslc).
void expect_compiles(const Glsl& g, const std::string& name) {
#ifdef DECY_GLSLC
  const std::string dir = ::testing::TempDir();
  const std::string comp = dir + "/decy_" + name + ".comp", spv = dir + "/decy_" + name + ".spv";
  std::ofstream(comp) << g.text;
  const std::string cmd = std::string(DECY_GLSLC) + " --target-env=vulkan1.1 -Werror -fshader-stage=compute -o " + spv + " " + comp;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << g.text;
#else
  (void)g, (void)name;
#endif
}

const char* kAdd = R"(
extern "C" __global__ void add(float* __restrict__ y, const float* __restrict__ x, int n, float alpha) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += alpha * x[i];
}
)";

TEST(DecyParse, FindsKernelsAndTheirParameters) {
  const Module m = parse_source("snippet.cu", kAdd);
  EXPECT_TRUE(m.clang_errors.empty()) << (m.clang_errors.empty() ? "" : m.clang_errors[0].str());
  const auto ks = kernels(m);
  ASSERT_EQ(ks.size(), 1u);
  const Function& k = *ks[0];
  EXPECT_EQ(k.name, "add");
  EXPECT_EQ(k.loc.line, 2u);
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_TRUE(k.params[0].type.pointer);
  EXPECT_FALSE(k.params[0].type.is_const);
  EXPECT_TRUE(k.params[0].type.restrict_);
  EXPECT_EQ(k.params[0].type.scalar, Scalar::F32);
  EXPECT_TRUE(k.params[1].type.is_const);
  EXPECT_EQ(k.params[2].type.scalar, Scalar::I32);
  EXPECT_FALSE(k.params[2].type.pointer);
  EXPECT_EQ(k.params[3].type.scalar, Scalar::F32);
}

TEST(DecyParse, ReadsOperatorsAndFoldsConstants) {
  const Module m = parse_source("snippet.cu", R"(
#define N 8
__global__ void k(int* y) { int a = N * 4; a <<= 1; y[0] = -a % 3; }
)");
  ASSERT_EQ(m.functions.size(), 1u);
  const Stmt& body = m.functions[0].body;
  ASSERT_EQ(body.body.size(), 3u);
  const Expr& init = body.body[0].decls.at(0).init;
  EXPECT_EQ(init.kind, Expr::Kind::IntLit);
  EXPECT_EQ(init.ival, 32u);
  EXPECT_EQ(body.body[1].exprs.at(0).op, "<<=");
  EXPECT_EQ(body.body[2].exprs.at(0).args.at(1).op, "%");
}

TEST(DecyGlsl, MapsBuffersPushConstantsAndIndexVariables) {
  const Glsl g = translate(kAdd);
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "#version 450"));
  EXPECT_TRUE(contains(g.text, "layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;"));
  EXPECT_TRUE(contains(g.text, "layout(std430, set = 0, binding = 0) restrict buffer decy_buf_y { float y[]; };"));
  EXPECT_TRUE(contains(g.text, "layout(std430, set = 0, binding = 1) restrict readonly buffer decy_buf_x { float x[]; };"));
  EXPECT_TRUE(contains(g.text, "layout(push_constant) uniform decy_push { int n; float alpha; } decy_pc;"));
  EXPECT_TRUE(contains(g.text, "gl_WorkGroupID.x"));
  EXPECT_TRUE(contains(g.text, "gl_WorkGroupSize.x"));
  EXPECT_TRUE(contains(g.text, "gl_LocalInvocationID.x"));
  EXPECT_TRUE(contains(g.text, "//   offset 4: float alpha (4 bytes)"));
  ASSERT_EQ(g.bindings.size(), 2u);
  EXPECT_TRUE(g.bindings[1].readonly);
  ASSERT_EQ(g.push.size(), 2u);
  EXPECT_EQ(g.push[1].offset, 4u);
  EXPECT_EQ(g.push_bytes, 8u);
  expect_compiles(g, "add");
}

TEST(DecyGlsl, SharedMemoryBarriersShufflesHelpersAndOffsets) {
  const Glsl g = translate(R"(
__device__ float twice(float v) { return 2.0f * v; }
__device__ void bump(float& v) { v += 1.0f; }
__global__ void k(const float* __restrict__ x, float* out, int n) {
  __shared__ float s[BLOCK];
  x += blockIdx.x * n;
  const float* row = x + 1;
  float v = twice(row[threadIdx.x]) + gridDim.x;
  bump(v);
  v += __shfl_xor_sync(0xffffffffu, v, 16);
  v += __shfl_down_sync(0xffffffffu, v, 1);
  s[threadIdx.x] = fmaxf(v, 0.0f) + rsqrtf(expf(v));
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
)", "", ParseOptions{{"BLOCK=64"}, {}, {}});
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "shared float s[64];"));
  EXPECT_TRUE(contains(g.text, "barrier();"));
  EXPECT_TRUE(contains(g.text, "subgroupShuffleXor(v, 16u)"));
  EXPECT_TRUE(contains(g.text, "decy_shfl_down(v, 1u)"));
  EXPECT_TRUE(contains(g.text, "#extension GL_KHR_shader_subgroup_shuffle : require"));
  EXPECT_TRUE(contains(g.text, "float twice(float v)"));
  EXPECT_TRUE(contains(g.text, "void bump(inout float v)"));
  EXPECT_TRUE(contains(g.text, "uint x_off = 0u;"));
  EXPECT_TRUE(contains(g.text, "x_off += (gl_WorkGroupID.x * uint(n));"));
  EXPECT_TRUE(contains(g.text, "uint row_off = x_off + 1u;"));
  EXPECT_TRUE(contains(g.text, "x[row_off + gl_LocalInvocationID.x]"));
  EXPECT_TRUE(contains(g.text, "gl_NumWorkGroups.x"));
  EXPECT_TRUE(contains(g.text, "inversesqrt(exp(v))"));
  expect_compiles(g, "shared");
}

// Note [Helpers with pointer parameters]: one GLSL function per combination of buffers, the offset passed.
TEST(DecyGlsl, HelpersWithPointerParametersAreSpecializedPerBuffer) {
  const Glsl g = translate(R"(
__device__ float sum_squares(const float* p, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) { s += p[i] * p[i]; }
  return s;
}
__device__ float twice_sum(const float* p, int n) { return 2.0f * sum_squares(p, n); }
__global__ void k(const float* __restrict__ a, const float* __restrict__ b, float* out, int n) {
  a += blockIdx.x * n;
  out[blockIdx.x] = twice_sum(a, n) + sum_squares(b + 4, n - 4);
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "float sum_squares_a(uint p_off, int n)"));
  EXPECT_TRUE(contains(g.text, "float sum_squares_b(uint p_off, int n)"));
  EXPECT_TRUE(contains(g.text, "float twice_sum_a(uint p_off, int n)"));
  EXPECT_TRUE(contains(g.text, "a[p_off + uint(i)]"));
  EXPECT_TRUE(contains(g.text, "twice_sum_a(a_off, n)"));
  EXPECT_TRUE(contains(g.text, "sum_squares_b(0u + 4u, (n - 4))"));
  EXPECT_LT(g.text.find("float sum_squares_a("), g.text.find("float twice_sum_a("));  // callee first
  expect_compiles(g, "helpers");
}

// Note [16-bit values] and Note [PTX idioms]: u16 buffers are 16-bit storage, u16 values 32-bit and
// truncated where C converts; the prelude's f16 conversion asm becomes exact GLSL.
TEST(DecyGlsl, SixteenBitBuffersAndF16AsmIdioms) {
  const Glsl g = translate(R"(
typedef unsigned short u16;
__device__ float to_f32(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ u16 to_f16(float f) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__global__ void k(const u16* __restrict__ a, u16* __restrict__ b, short* c, int n) {
  const int i = threadIdx.x;
  b[i] = to_f16(to_f32(a[i]) * 2.0f);
  c[i] = static_cast<short>(n + i);
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "#extension GL_EXT_shader_16bit_storage : require"));
  EXPECT_TRUE(contains(g.text, "readonly buffer decy_buf_a { uint16_t a[]; };"));
  EXPECT_TRUE(contains(g.text, "f = unpackHalf2x16(uint(h)).x;"));
  EXPECT_TRUE(contains(g.text, "h = decy_f32_to_f16(f);"));
  EXPECT_TRUE(contains(g.text, "b[i] = uint16_t(to_f16((to_f32(uint(a[i])) * 2.0)));"));
  EXPECT_TRUE(contains(g.text, "c[i] = int16_t(bitfieldExtract(int(n + i), 0, 16));"));
  EXPECT_TRUE(contains(g.text, "storageBuffer16BitAccess"));
  const Glsl z = translate("typedef unsigned short u16;\n__global__ void k(u16* y, int n) { y[0] = n > 0 ? u16{1} : u16{}; }");
  ASSERT_TRUE(z.errors.empty()) << errors(z);
  EXPECT_TRUE(contains(z.text, "y[0] = uint16_t((n > 0) ? (uint(1) & 0xffffu) : (uint(0) & 0xffffu));")) << z.text;
  expect_compiles(g, "sixteen");
}

// Note [16-bit values], 8-bit part: u8 / i8 buffer elements, 32-bit values truncated where C converts.
TEST(DecyGlsl, EightBitBuffers) {
  const Glsl g = translate(R"(
typedef unsigned char u8;
typedef signed char i8;
__global__ void k(const u8* __restrict__ w, i8* q, int n) {
  const int i = threadIdx.x;
  const int lo = w[i] & 0xF;
  q[i] = static_cast<i8>(lo * n);
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "#extension GL_EXT_shader_8bit_storage : require"));
  EXPECT_FALSE(contains(g.text, "GL_EXT_shader_16bit_storage"));
  EXPECT_TRUE(contains(g.text, "restrict readonly buffer decy_buf_w { uint8_t w[]; };"));
  EXPECT_TRUE(contains(g.text, "buffer decy_buf_q { int8_t q[]; };"));
  EXPECT_TRUE(contains(g.text, "int lo = int(uint(w[i])) & 15;")) << g.text;
  EXPECT_TRUE(contains(g.text, "q[i] = int8_t(bitfieldExtract(int(lo * n), 0, 8));")) << g.text;
  EXPECT_TRUE(contains(g.text, "storageBuffer8BitAccess"));
  expect_compiles(g, "eight");
  // __shfl_sync(full mask, v, lane): subgroupShuffle, the lane modulo the subgroup size (CUDA's modulo 32).
  const Glsl s = translate("__global__ void k(float* y, int l) { y[threadIdx.x] = __shfl_sync(0xffffffffu, y[threadIdx.x], l); }");
  ASSERT_TRUE(s.errors.empty()) << errors(s);
  EXPECT_TRUE(contains(s.text, "subgroupShuffle(y[gl_LocalInvocationID.x], uint(l) & (gl_SubgroupSize - 1u))")) << s.text;
  expect_compiles(s, "shfl_sync");
}

// Note [Vector types]: float4 / uint4 values and buffers, make_uint4, member access, reinterpret_cast of a
// buffer pointer to a vector pointer (an alias of the binding, indexed in its elements), an address as the
// byte offset, __ldcs as a plain load.
TEST(DecyGlsl, VectorTypesAndBufferAliases) {
  const Glsl g = translate(R"(
typedef unsigned long long u64;
typedef unsigned short u16;
__global__ void k(const float* __restrict__ x, const uint4* __restrict__ u, u16* __restrict__ h, float* y, int n) {
  const int i = threadIdx.x;
  const float* row = x + i * n;
  if ((reinterpret_cast<u64>(row) & 15) == 0) {
    const float4 v = reinterpret_cast<const float4*>(row)[1];
    y[i] = v.x + v.w;
  }
  const uint4 w = __ldcs(u + i);
  *reinterpret_cast<uint4*>(h + i * 8) = make_uint4(w.x, w.y, 0u, w.w);
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "layout(std430, set = 0, binding = 0) readonly buffer decy_buf_x { float x[]; };")) << g.text;  // no restrict
  EXPECT_TRUE(contains(g.text, "layout(std430, set = 0, binding = 0) readonly buffer decy_buf_x_vec4 { vec4 x_vec4[]; };"));
  EXPECT_TRUE(contains(g.text, "restrict readonly buffer decy_buf_u { uvec4 u[]; };"));
  EXPECT_TRUE(contains(g.text, "layout(std430, set = 0, binding = 2) buffer decy_buf_h_uvec4 { uvec4 h_uvec4[]; };"));
  EXPECT_TRUE(contains(g.text, "binding 0: x float[] readonly (const float *__restrict x); also read as vec4[]"));
  EXPECT_TRUE(contains(g.text, "if (((uint64_t(row_off) * 4ul) & 15ul) == 0ul)")) << g.text;
  EXPECT_TRUE(contains(g.text, "vec4 v = x_vec4[((row_off * 4u) / 16u) + 1u];")) << g.text;
  EXPECT_TRUE(contains(g.text, "y[i] = (v.x + v.w);"));
  EXPECT_TRUE(contains(g.text, "uvec4 w = u[(0u + uint(i)) + 0u];")) << g.text;
  EXPECT_TRUE(contains(g.text, "h_uvec4[(((0u + uint((i * 8))) * 2u) / 16u) + 0u] = uvec4(w.x, w.y, 0u, w.w);")) << g.text;
  expect_compiles(g, "vectors");
  // A vector passed by value to a kernel is refused by name.
  const Glsl v = translate("__global__ void k(float* y, float4 a) {\n  y[0] = a.x;\n}");
  EXPECT_TRUE(contains(errors(v), "vector parameter 'a' passed by value")) << errors(v);
}

// Note [Views chosen by ?:]: a view of one of two buffers, loads as ?:, stores as if / else.
TEST(DecyGlsl, ViewsChosenByConditional) {
  const Glsl g = translate(R"(
__global__ void k(float* __restrict__ q, float* __restrict__ k, int n) {
  const int i = threadIdx.x;
  const bool is_k = i >= n;
  float* v = (is_k ? k : q) + 2 * i;
  const float x = v[0];
  v[0] = x * 2.0f, v[1] = v[0] + 1.0f;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "bool v_sel = is_k;"));
  EXPECT_TRUE(contains(g.text, "uint v_off = v_sel ? 0u + uint((2 * i)) : 0u + uint((2 * i));")) << g.text;
  EXPECT_TRUE(contains(g.text, "float x = v_sel ? k[v_off + 0u] : q[v_off + 0u];")) << g.text;
  EXPECT_TRUE(contains(g.text, "if (v_sel)\n  {\n    (k[v_off + 0u] = (x * 2.0)) , (k[v_off + 1u] = (k[v_off + 0u] + 1.0));\n  }\n  else\n  {\n"
                               "    (q[v_off + 0u] = (x * 2.0)) , (q[v_off + 1u] = (q[v_off + 0u] + 1.0));\n  }")) << g.text;
  expect_compiles(g, "choice");
  const Glsl bad = translate("__global__ void k(float* q, float* k, int n) {\n  float* v = n > 0 ? k : q;\n  if ((v[0] = 1.0f) > 0.0f) q[1] = 2.0f;\n}");
  EXPECT_TRUE(contains(errors(bad), "snippet.cu:3: error: a store through 'v' (chosen by ?:) inside an expression")) << errors(bad);
}

// __syncthreads_or as a barrier and a shared flag; 64-bit xor shuffles as two 32-bit ones.
TEST(DecyGlsl, SyncthreadsOrAndSixtyFourBitShuffles) {
  const Glsl g = translate(R"(
typedef unsigned long long u64;
__global__ void k(u64* y, int* f) {
  u64 v = y[threadIdx.x];
  v = v > __shfl_xor_sync(0xffffffffu, v, 1) ? v : 0;
  const int any = __syncthreads_or(f[threadIdx.x]);
  y[threadIdx.x] = v + any;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "(decy_shfl_xor64(uint64_t(v), 1u))")) << g.text;
  EXPECT_TRUE(contains(g.text, "packUint2x32(uvec2(subgroupShuffleXor(h.x, o), subgroupShuffleXor(h.y, o)))"));
  EXPECT_TRUE(contains(g.text, "int any = decy_syncthreads_or(f[gl_LocalInvocationID.x]);")) << g.text;
  EXPECT_TRUE(contains(g.text, "shared uint decy_sync_or;"));
  expect_compiles(g, "sync_or");
}

// Note [Structs of scalars]: a GLSL struct, a buffer of them or an alias of one; a __shared__ array passed
// to a helper's pointer parameter (a global: specialized like a buffer).
TEST(DecyGlsl, StructsOfScalarsAndSharedArraysForHelpers) {
  const Glsl g = translate(R"(
struct Pair { float logit; int id; };
__device__ void twice(float* s) { s[threadIdx.x] *= 2.0f; }
__global__ void k(const Pair* __restrict__ in, int* out) {
  __shared__ float s[64];
  s[threadIdx.x] = in[threadIdx.x].logit;
  twice(s);
  Pair* p = reinterpret_cast<Pair*>(out + 2);
  p[threadIdx.x].logit = s[threadIdx.x];
  p[threadIdx.x].id = in[threadIdx.x].id;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "struct Pair { float logit; int id; };"));
  EXPECT_TRUE(contains(g.text, "restrict readonly buffer decy_buf_decy_in { Pair decy_in[]; };")) << g.text;
  EXPECT_TRUE(contains(g.text, "binding = 1) buffer decy_buf_decy_out_Pair { Pair decy_out_Pair[]; };"));
  EXPECT_TRUE(contains(g.text, "void twice_s(uint s_off) {"));
  EXPECT_TRUE(contains(g.text, "decy_out_Pair[((p_off * 4u) / 8u) + gl_LocalInvocationID.x].id = decy_in[gl_LocalInvocationID.x].id;")) << g.text;
  expect_compiles(g, "structs");
  const Glsl v = translate("struct P { float a; };\n__global__ void k(float* y, P p) {\n  y[0] = p.a;\n}");
  EXPECT_TRUE(contains(errors(v), "struct parameter 'p' passed by value")) << errors(v);
}

// Note [Signed remainder]: C's % of signed integers, not GLSL's (OpSMod); unsigned % stays %.
TEST(DecyGlsl, SignedRemainderKeepsCSemantics) {
  const Glsl g = translate("__global__ void k(int* y, unsigned* u) {\n  y[0] = y[1] % y[2];\n  y[3] %= 3;\n  u[0] = u[1] % u[2];\n}");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "int decy_srem(int a, int b) { return a - b * (a / b); }"));
  EXPECT_TRUE(contains(g.text, "y[0] = decy_srem(y[1], y[2]);"));
  EXPECT_TRUE(contains(g.text, "y[3] = decy_srem(y[3], 3);"));
  EXPECT_TRUE(contains(g.text, "u[0] = (u[1] % u[2]);"));
  expect_compiles(g, "srem");
}

// Note [Correctly rounded intrinsics]: one `precise` operation each (no contraction into an fma), sincosf's
// out parameters through a range-reduced helper (Note [sincosf]), the other math intrinsics mapped.
TEST(DecyGlsl, CorrectlyRoundedIntrinsicsAndSincos) {
  const Glsl g = translate(R"(
__global__ void k(float* y, int* e, float a, float b) {
  y[0] = __fsub_rn(__fmul_rn(a, b), __fadd_rn(a, 1.0f));
  y[1] = __fdiv_rn(a, b);
  float s, c;
  sincosf(a, &s, &c);
  __sincosf(b, &y[2], &y[3]);
  y[4] = s + c;
  y[5] = frexpf(a, &e[0]) + ldexpf(b, 3) + exp2f(a) + rintf(b) + __sinf(a) + __cosf(b);
  e[1] = __float2int_rn(a);
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "float decy_fadd_rn(float a, float b) {  // Note [Correctly rounded intrinsics]\n  precise float r = a + b;"));
  EXPECT_TRUE(contains(g.text, "precise float r = a - b;"));
  EXPECT_TRUE(contains(g.text, "precise float r = a * b;"));
  EXPECT_TRUE(contains(g.text, "float decy_fdiv_rn(float a, float b) {  // Note [Correctly rounded intrinsics]: the float nearest a / b"));
  EXPECT_TRUE(contains(g.text, "precise float q0 = a / b;") && contains(g.text, "float decy_div_residual(float a, float b, float q) {"));
  EXPECT_TRUE(contains(g.text, "y[0] = decy_fsub_rn(decy_fmul_rn(a, b), decy_fadd_rn(a, 1.0));")) << g.text;
  EXPECT_TRUE(contains(g.text, "void decy_sincos(float x, out float s, out float c) {"));
  EXPECT_TRUE(contains(g.text, "decy_sincos(a, s, c);"));
  EXPECT_TRUE(contains(g.text, "decy_sincos(b, y[2], y[3]);"));
  EXPECT_TRUE(contains(g.text, "frexp(a, e[0])"));
  EXPECT_TRUE(contains(g.text, "ldexp(b, 3)"));
  EXPECT_TRUE(contains(g.text, "roundEven(b)"));
  EXPECT_TRUE(contains(g.text, "e[1] = int(roundEven(a));"));
  expect_compiles(g, "rounded");
  // sincosf's pointer arguments must be &lvalue: a pointer parameter passed on is refused by name.
  const Glsl bad = translate("__global__ void k(float* y, float a) {\n  sincosf(a, y, y + 1);\n}");
  EXPECT_TRUE(contains(errors(bad), "snippet.cu:2: error: pointer argument of 'sincosf' that is not '&variable'")) << errors(bad);
}

// Note [Double math]: double values, buffers and push constants (8-byte aligned); __dadd_rn ... as precise
// double operations; C's double exp/log/pow/sin/cos as decy's functions, the float overloads as GLSL's.
TEST(DecyGlsl, DoublesAndTheirMath) {
  const Glsl g = translate(R"(
__global__ void k(double* y, const float* x, int n, double u) {
  const double t = static_cast<double>(x[0]) * 0.1;
  y[0] = __dadd_rn(__dmul_rn(u, t), __dsub_rn(t, -2.5));
  y[1] = pow(t, -2.0 * n / 3.0) + exp(t) + log(u) + sin(t) + cos(u);
  y[2] = isfinite(t) && isfinite(x[1]) ? cos(x[2]) : 0.0f;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "//   binding 0: y double[] read-write")) << g.text;
  EXPECT_TRUE(contains(g.text, "//   offset 8: double u (8 bytes)")) << g.text;
  EXPECT_TRUE(contains(g.text, "// double: needs the shaderFloat64 device feature (Note [Double math]).")) << g.text;
  EXPECT_TRUE(contains(g.text, "double decy_dadd_rn(double a, double b) {  // Note [Correctly rounded intrinsics]\n  precise double r = a + b;"));
  EXPECT_TRUE(contains(g.text, "double t = double(x[0]) * 0.10000000000000001lf;")) << g.text;
  EXPECT_TRUE(contains(g.text, "y[0] = decy_dadd_rn(decy_dmul_rn(u, t), decy_dsub_rn(t, -2.5lf));")) << g.text;
  EXPECT_TRUE(contains(g.text, "decy_pow64(t, ") && contains(g.text, "decy_exp64(t)") && contains(g.text, "decy_log64(u)") &&
              contains(g.text, "decy_sin64(t)") && contains(g.text, "decy_cos64(u)"))
      << g.text;
  EXPECT_TRUE(contains(g.text, "(abs(t) <= 1.7976931348623157e308lf)")) << g.text;
  EXPECT_TRUE(contains(g.text, "((floatBitsToUint(x[1]) & 0x7f800000u) != 0x7f800000u)")) << g.text;
  EXPECT_TRUE(contains(g.text, "cos(x[2])") && !contains(g.text, "decy_cos64(x[2])")) << "cos of a float is GLSL's: " << g.text;
  expect_compiles(g, "doubles");
}
// Note [Optional buffers]: `p != nullptr`, `p == nullptr`, `if (p)` on a pointer parameter, also through a
// helper's pointer parameter, read a push-constant flag after the scalars; the header says which buffer.
TEST(DecyGlsl, NullptrTestsOfOptionalBuffersArePushConstantFlags) {
  const Glsl g = translate(R"(
__device__ float scale(const float* __restrict__ f, int i) { return f != nullptr ? f[i] : 1.0f; }
__global__ void k(float* y, const float* __restrict__ f, const float* g, int n) {
  const int i = threadIdx.x;
  if (g == nullptr) return;
  if (f) y[i] = g[i];
  y[i] *= scale(f, i) * n;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  ASSERT_EQ(g.push.size(), 3u);
  EXPECT_EQ(g.push[1].name, "decy_has_f");
  EXPECT_EQ(g.push[1].offset, 4u);
  EXPECT_EQ(g.push[2].name, "decy_has_g");
  EXPECT_EQ(g.push_bytes, 12u);
  EXPECT_TRUE(contains(g.text, "//   offset 4: uint decy_has_f (4 bytes): 1 when binding 1 (f) holds data, 0 for CUDA's nullptr")) << g.text;
  EXPECT_TRUE(contains(g.text, "if (decy_pc.decy_has_g == 0u)"));
  EXPECT_TRUE(contains(g.text, "if (decy_pc.decy_has_f != 0u)"));
  EXPECT_TRUE(contains(g.text, "return (decy_pc.decy_has_f != 0u) ? f[f_off + uint(i)] : 1.0;")) << g.text;
  expect_compiles(g, "optional");
  const Glsl two = translate("__global__ void k(float* y, float* x) {\n  if (x == y) y[0] = 1.0f;\n}");
  EXPECT_FALSE(two.errors.empty());
}

TEST(DecyGlsl, TheOnlyKernelNeedsNoName) {
  EXPECT_TRUE(translate(kAdd).errors.empty());
  const Glsl two = translate(std::string(kAdd) + "__global__ void other(float* y) { y[0] = 1.0f; }");
  ASSERT_EQ(two.errors.size(), 1u);
  EXPECT_TRUE(contains(two.errors[0].message, "defines 2 kernels: name one with --kernel"));
  EXPECT_TRUE(translate(std::string(kAdd) + "__global__ void other(float* y) { y[0] = 1.0f; }", "other").errors.empty());
}

// Note [Unsupported constructs]: each is named with its line, never translated.
struct Unsupported {
  const char* construct;
  const char* source;
  unsigned line;
  const char* message;
};
const Unsupported kUnsupported[] = {
    {"goto", "__global__ void k(float* y) {\n  goto end;\n  y[0] = 1.0f;\nend:\n  return;\n}", 2, "goto"},
    {"printf", "__global__ void k(float* y) {\n  y[0] = 1.0f;\n  printf(\"%f\", y[0]);\n}", 3, "call to 'printf'"},
    {"recursion", "__device__ int f(int n) {\n  return n > 0 ? f(n - 1) : 0;\n}\n__global__ void k(int* y) { y[0] = f(3); }", 2,
     "recursive call of 'f'"},
    {"long double", "__global__ void k(float* y, long double d) {\n  y[0] = d;\n}", 1, "long double"},
    {"extern __shared__ of doubles", "__global__ void k(float* y) {\n  extern __shared__ double d[];\n  d[0] = 1.0;\n  y[0] = d[0];\n}", 2,
     "only extern __shared__ arrays of float, int or unsigned"},
    {"++ in dynamic shared memory", "__global__ void k(int* y) {\n  extern __shared__ int c[];\n  c[0] = 0;\n  c[0]++;\n  y[0] = c[0];\n}", 4,
     "'++' on an element of dynamic shared memory"},
    {"asm", "__global__ void k(float* y) {\n  asm(\"exit;\");\n}", 2, "inline PTX asm \"exit;\""},
    {"u16 increment", "__global__ void k(unsigned short* y) {\n  unsigned short h = y[0];\n  h++;\n  y[0] = h;\n}", 3, "on a 16-bit value"},
    {"u8 increment", "__global__ void k(unsigned char* y) {\n  unsigned char h = y[0];\n  ++h;\n  y[0] = h;\n}", 3, "on an 8-bit value"},
    {"8-bit scalar parameter", "__global__ void k(float* y, signed char c) {\n  y[0] = c;\n}", 1, "8-bit scalar parameter 'c'"},
    {"switch with fallthrough", "__global__ void k(int* y) {\n  switch (y[0]) { case 0: y[1] = 1; case 1: y[2] = 2; break; }\n}", 2, "falls into the next"},
    {"struct with a pointer", "struct P { float* a; };\n__global__ void k(P* y) {\n  y[0].a[0] = 1.0f;\n}", 2, "type 'P *'"},
    {"partial mask", "__global__ void k(float* y) {\n  y[0] = __shfl_xor_sync(0xffffu, y[0], 1);\n}", 2, "mask other than 0xffffffff"},
    {"int /= unsigned", "__global__ void k(int* y, unsigned d) {\n  int x = y[0];\n  x /= d;\n  y[0] = x;\n}", 3, "C divides in the common type"},
    {"helper pointer to a local scalar", "__device__ float first(const float* p) { return p[0]; }\n__global__ void k(float* y) {\n  float a = 1.0f;\n  y[0] = first(&a);\n}", 4,
     "address-of"},
    // GLSL arrays cannot alias; the output compiled with the values converted, not reinterpreted, before this was refused.
    {"view of a shared array",
     "__device__ int bits(const float* a) { return reinterpret_cast<const int*>(a)[0]; }\n__global__ void k(int* y) {\n  __shared__ float s[4];\n"
     "  s[0] = 1.0f;\n  y[0] = bits(s);\n}",
     1, "a 'const int' view of an array of float"},
    {"float4 view of a local array",
     "__device__ float first(const float* a) { return reinterpret_cast<const float4*>(a)[0].y; }\n__global__ void k(float* y) {\n"
     "  float h[8];\n  h[1] = 1.0f;\n  y[0] = first(h);\n}",
     1, "a 'const float4' view of an array of float"},
};

TEST(DecyCheck, UnsupportedConstructsAreNamedWithTheirLine) {
  for (const Unsupported& u : kUnsupported) {
    const Glsl g = translate(u.source);
    EXPECT_TRUE(g.text.empty()) << u.construct;
    bool found = false;
    for (const auto& e : g.errors) found |= e.loc.line == u.line && contains(e.message, u.message) && e.loc.file == "snippet.cu";
    EXPECT_TRUE(found) << u.construct << ": expected line " << u.line << " '" << u.message << "', got:\n" << errors(g);
  }
}

TEST(DecyCheck, ErrorsInAnotherKernelDoNotBlockThisOne) {
  const std::string src = std::string(kAdd) + "__global__ void bad(float* y) { printf(\"x\"); }\n";
  EXPECT_TRUE(translate(src, "add").errors.empty());
  EXPECT_FALSE(translate(src, "bad").errors.empty());
}

TEST(DecyCheck, TemplateKernelsWithoutAnInstanceAreListedAsSkipped) {
  const Module m = parse_source("snippet.cu", "template <int N> __global__ void t(float* y) { y[0] = N; }\n");
  ASSERT_EQ(m.skipped.size(), 1u);
  EXPECT_EQ(m.skipped[0].name, "t");
  const Checked c = check(m, "t");
  ASSERT_FALSE(c.errors.empty());
  EXPECT_TRUE(contains(c.errors[0].message, "template kernel without an instance")) << c.errors[0].message;
}

// Note [Template kernels] (parse.cpp): the file's explicit instantiations and the instances asked for are
// kernels named by instance_name(), their bodies with the arguments substituted (non-type and type
// parameters); an instance that matches no template is an error naming it.
TEST(DecyParse, TemplateKernelInstances) {
  const char* src = R"(
template <int N, bool Scale, typename T>
__global__ void scale(T* __restrict__ y, const T* __restrict__ x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Scale ? x[i] * static_cast<T>(N) : x[i];
}
template __global__ void scale<4, true, float>(float*, const float*, int);
)";
  EXPECT_EQ(instance_name("scale<4, true, float>"), "scale_4_true_float");
  EXPECT_EQ(instance_name("k<-1>"), "k_m1");
  ParseOptions o;
  o.instances = {"scale<2, false, int>"};
  const Module m = parse_source("snippet.cu", src, o);
  EXPECT_TRUE(m.skipped.empty()) << "a template with instances is listed by them";
  ASSERT_EQ(kernels(m).size(), 2u);
  EXPECT_EQ(kernels(m)[0]->instance, "scale<4, true, float>");
  const Glsl g = emit_glsl(check(m, "scale_4_true_float"), "snippet.cu");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "kernel scale<4, true, float>;")) << g.text;
  EXPECT_TRUE(contains(g.text, "buffer decy_buf_y { float y[]; }")) << g.text;
  EXPECT_TRUE(contains(g.text, "y[i] = (true ? (x[i] * float(4)) : x[i]);")) << g.text;
  expect_compiles(g, "template_float");
  const Glsl gi = emit_glsl(check(m, "scale_2_false_int"), "snippet.cu");
  ASSERT_TRUE(gi.errors.empty()) << errors(gi);
  EXPECT_TRUE(contains(gi.text, "buffer decy_buf_y { int y[]; }")) << gi.text;
  EXPECT_TRUE(contains(gi.text, "y[i] = (false ? (x[i] * 2) : x[i]);")) << gi.text;
  ParseOptions bad;
  bad.instances = {"scale<2, false>"};
  const Checked c = check(parse_source("snippet.cu", src, bad), "scale_2_false");
  ASSERT_FALSE(c.errors.empty());
  EXPECT_TRUE(contains(c.errors.back().message, "kernel instance 'scale<2, false>': its template arguments match no template")) << c.errors.back().message;
}

// ---- WGSL (wgsl.cpp, Note [WGSL limits] in check_wgsl.cpp) ----

Wgsl translate_wgsl(const std::string& src, const std::string& kernel = "", const WgslOptions& w = {}, const ParseOptions& o = {}) {
  const Module m = parse_source("snippet.cu", src, o);
  return emit_wgsl(check(m, kernel), "snippet.cu", w);
}
std::string errors(const Wgsl& g) {
  std::string s;
  for (const auto& e : g.errors) s += e.str() + "\n";
  return s;
}
Wgsl translate_wgsl_file(const std::string& path, const std::string& kernel, const WgslOptions& w = {}) {
  return emit_wgsl(check(parse_file(path), kernel), path, w);
}

// Dawn accepts the module and builds its pipeline (decy/wgsl_runner --validate): the WGSL validator, as glslc
// is GLSL's above. Where the runner cannot run (no node, npm webgpu or SwiftShader) it says so once and
// checks nothing; decy_wgsl_test.cpp then skips visibly.
void expect_valid_wgsl(const Wgsl& g, const std::string& name) {
  if (const std::string why = test::wgsl_runner_missing(); !why.empty()) {
    static bool said = false;
    if (!said) std::printf("WGSL not validated: %s\n", why.c_str()), said = true;
    return;
  }
  const std::string path = ::testing::TempDir() + "/decy_" + name + "_" + std::to_string(::getpid()) + ".wgsl";
  std::ofstream(path, std::ios::binary) << g.text;
  std::string log;
  EXPECT_EQ(test::run_wgsl_runner("--validate '" + path + "'", &log), 0) << log << "\n" << g.text;
}

TEST(DecyWgsl, MapsBuffersTheUniformStructAndIndexVariables) {
  const Wgsl g = translate_wgsl(kAdd);
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "override decy_block_x: u32;"));
  EXPECT_TRUE(contains(g.text, "@group(0) @binding(0) var<storage, read_write> decy_b_y: array<f32>;"));
  EXPECT_TRUE(contains(g.text, "@group(0) @binding(1) var<storage, read> decy_b_x: array<f32>;"));
  EXPECT_TRUE(contains(g.text, "struct DecyParams { n: i32, alpha: f32 }"));
  EXPECT_TRUE(contains(g.text, "@group(0) @binding(2) var<uniform> decy_u: DecyParams;"));
  EXPECT_TRUE(contains(g.text, "@compute @workgroup_size(decy_block_x)"));
  EXPECT_TRUE(contains(g.text, "var n: i32 = decy_u.n;"));
  EXPECT_TRUE(contains(g.text, "var i: i32 = i32((decy_wid.x * decy_block_x) + decy_lid.x);"));
  EXPECT_TRUE(contains(g.text, "decy_b_y[i] += alpha * decy_b_x[i];"));
  EXPECT_TRUE(contains(g.text, "//   offset 4: f32 alpha (4 bytes)"));
  ASSERT_EQ(g.bindings.size(), 2u);
  EXPECT_FALSE(g.bindings[0].readonly);
  EXPECT_TRUE(g.bindings[1].readonly);
  ASSERT_EQ(g.uniforms.size(), 2u);
  EXPECT_EQ(g.uniforms[1].offset, 4u);
  EXPECT_EQ(g.uniform_bytes, 8u);
  EXPECT_FALSE(g.subgroups);
  expect_valid_wgsl(g, "add");
}

TEST(DecyWgsl, SharedMemoryBarriersOffsetsAndHelpers) {
  const Wgsl g = translate_wgsl_file(std::string(DECY_TESTDATA_DIR) + "/kernels.cu", "row_sum_shared");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "var<workgroup> partial: array<f32, 256>;"));
  EXPECT_TRUE(contains(g.text, "storageBarrier();\n  workgroupBarrier();"));
  EXPECT_TRUE(contains(g.text, "var decy_off_x: u32 = 0u;"));
  EXPECT_TRUE(contains(g.text, "decy_off_x += u32(r * n);"));
  EXPECT_TRUE(contains(g.text, "s += decy_b_x[decy_off_x + u32(i)];"));
  EXPECT_TRUE(contains(g.text, "stride >>= 1u)"));
  const Wgsl h = translate_wgsl(R"(
__device__ float sum_squares(const float* p, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) { s += p[i] * p[i]; }
  return s;
}
__device__ float scaled(float v, int k) { v *= 2.0f; return v + threadIdx.x + k; }
__global__ void k(const float* __restrict__ a, float* out, int n) {
  out[blockIdx.x] = scaled(sum_squares(a + 4, n - 4), 1);
}
)");
  ASSERT_TRUE(h.errors.empty()) << errors(h);
  EXPECT_TRUE(contains(h.text, "fn decy_sum_squares_a(decy_off_p_in: u32, n: i32) -> f32 {"));
  EXPECT_TRUE(contains(h.text, "s += decy_b_a[decy_off_p + u32(i)] * decy_b_a[decy_off_p + u32(i)];"));
  EXPECT_TRUE(contains(h.text, "i++)"));
  EXPECT_TRUE(contains(h.text, "fn scaled(decy_in_v: f32, k: i32, decy_lid: vec3<u32>, decy_wid: vec3<u32>, decy_nwg: vec3<u32>) -> f32 {"));
  EXPECT_TRUE(contains(h.text, "var v: f32 = decy_in_v;"));
  EXPECT_TRUE(contains(h.text, "decy_b_out[decy_wid.x] = scaled(decy_sum_squares_a(0u + 4u, n - 4i), 1i, decy_lid, decy_wid, decy_nwg);"));
  expect_valid_wgsl(g, "row_sum_shared");
  expect_valid_wgsl(h, "helpers");
}

TEST(DecyWgsl, ControlFlowAndOperatorsWgslLacks) {
  const Wgsl g = translate_wgsl(R"(
__global__ void k(int* y, unsigned* u, float* f) {
  int i = 0;
  do { i += 2; if (i == 4) continue; } while (i < 10);
  y[0] = y[1] > 0 ? y[1] : -y[1];
  u[0] = -u[1];
  y[2] = y[3] % y[4];
  y[5] = 1 << u[2];
  f[0]++;
  i = 3, y[6] = i;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "loop {\n    {\n      i += 2i;"));
  EXPECT_TRUE(contains(g.text, "continuing {\n      break if !(i < 10i);"));
  EXPECT_TRUE(contains(g.text, "decy_b_y[0i] = select(-decy_b_y[1i], decy_b_y[1i], decy_b_y[1i] > 0i);"));
  EXPECT_TRUE(contains(g.text, "decy_b_u[0i] = 0u - decy_b_u[1i];"));
  EXPECT_TRUE(contains(g.text, "decy_b_y[2i] = decy_b_y[3i] % decy_b_y[4i];"));  // WGSL's % truncates, as C's
  EXPECT_TRUE(contains(g.text, "decy_b_y[5i] = 1i << decy_b_u[2i];"));
  EXPECT_TRUE(contains(g.text, "decy_b_f[0i] += 1.0f;"));
  EXPECT_TRUE(contains(g.text, "i = 3i;\n  decy_b_y[6i] = i;"));
  expect_valid_wgsl(g, "control_flow");
}

TEST(DecyWgsl, ShufflesNeedTheSubgroupsFeature) {
  const std::string kernels = std::string(DECY_TESTDATA_DIR) + "/kernels.cu";
  const Wgsl without = translate_wgsl_file(kernels, "row_sum_warp");
  EXPECT_TRUE(without.text.empty());
  ASSERT_FALSE(without.errors.empty());
  EXPECT_TRUE(contains(errors(without), "kernels.cu:39: error: __shfl_xor_sync needs subgroups")) << errors(without);
  EXPECT_TRUE(contains(errors(without), "error: warpSize needs subgroups")) << errors(without);
  const Wgsl g = translate_wgsl_file(kernels, "row_sum_warp", {true});
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(g.subgroups);
  EXPECT_TRUE(contains(g.text, "enable subgroups;"));
  EXPECT_TRUE(contains(g.text, "@builtin(subgroup_size) decy_sgs: u32"));
  EXPECT_TRUE(contains(g.text, "v += subgroupShuffleXor(v, u32(o));"));
  EXPECT_TRUE(contains(g.text, "var lane: i32 = t % i32(decy_sgs);"));
  const Wgsl down = translate_wgsl("__global__ void k(float* y) {\n  y[0] = __shfl_down_sync(0xffffffffu, y[0], 1);\n}", "", {true});
  ASSERT_TRUE(down.errors.empty()) << errors(down);
  EXPECT_TRUE(contains(down.text, "decy_shfl_down_f32(decy_b_y[0i], 1u, decy_sgs, decy_sgid)"));
  expect_valid_wgsl(g, "row_sum_warp");
  expect_valid_wgsl(down, "shfl_down");
  // Subgroups requested but unused: a portable module, no `enable`.
  EXPECT_FALSE(contains(translate_wgsl(kAdd, "", {true}).text, "enable subgroups"));
}

// Note [WGSL limits]: each refused with its line, never translated.
const Unsupported kWgslUnsupported[] = {
    {"u64 division in an index", "__global__ void k(float* y, int n) {\n  y[(unsigned long long)n / 2] = 1.0f;\n}", 2, "64-bit integer type"},
    {"u64 variable", "__global__ void k(float* y, int n) {\n  unsigned long long i = n;\n  y[i] = 1.0f;\n}", 2, "64-bit integer type 'unsigned long long' of variable 'i'"},
    {"u64 parameter", "__global__ void k(float* y,\n unsigned long long n) {\n  y[0] = 1.0f;\n}", 2, "64-bit integer type 'unsigned long long'"},
    {"u16 buffer", "__global__ void k(unsigned short* y) {\n  y[0] = 1;\n}", 1, "16-bit integer type 'unsigned short *' of parameter 'y'"},
    {"bool parameter", "__global__ void k(float* y,\n bool b) {\n  y[0] = b;\n}", 2, "bool parameter 'b'"},
    {"bool buffer", "__global__ void k(bool* y) {\n  y[0] = true;\n}", 1, "bool buffer 'y'"},
    {"increment in an index", "__global__ void k(float* y) {\n  int i = 0;\n  y[i++] = 1.0f;\n}", 3, "'++' inside an expression"},
    {"chained assignment", "__global__ void k(int* y) {\n  int a, b;\n  a = b = 1;\n  y[0] = a;\n}", 3, "'=' inside an expression"},
    {"comma in an expression", "__global__ void k(int* y) {\n  int a = 0;\n  y[0] = (a = 1, a);\n}", 3, "comma operator inside an expression"},
    {"call in a ?: arm", "__device__ float f(float* p) { p[1] = 1.0f; return 2.0f; }\n__global__ void k(float* y) {\n  y[0] = y[2] > 0.0f ? f(y) : 0.0f;\n}",
     3, "a function call in an arm of ?:"},
    {"reference parameter", "__device__ void bump(float& v) { v += 1.0f; }\n__global__ void k(float* y) {\n  float v = y[0];\n  bump(v);\n  y[0] = v;\n}", 1,
     "reference parameter 'v' of helper 'bump'"},
    {"int /= unsigned", "__global__ void k(int* y, unsigned d) {\n  int x = y[0];\n  x /= d;\n  y[0] = x;\n}", 3, "C divides unsigned"},
    {"double (check's)", "__global__ void k(float* y, double d) {\n  y[0] = d;\n}", 1, "double"},
    {"extern __shared__", "__global__ void k(float* y) {\n  extern __shared__ float s[];\n  s[0] = 1.0f;\n  y[0] = s[0];\n}", 2, "extern __shared__ 's'"},
    {"8-bit buffer", "__global__ void k(float* y,\n                  const unsigned char* w) {\n  y[0] = w[0];\n}", 2, "8-bit integer type"},
    {"nullptr test", "__global__ void k(float* y, const float* f) {\n  y[0] = 1.0f;\n  if (f != nullptr) y[0] = f[0];\n}", 3, "nullptr test of an optional buffer"},
    {"__fmul_rn", "__global__ void k(float* y) {\n  y[0] = __fmul_rn(y[1], y[2]);\n}", 2, "call of '__fmul_rn' (no WGSL counterpart"},
    {"struct buffer", "struct P { float a; };\n__global__ void k(float* y,\n                  const P* p) {\n  y[0] = p[0].a;\n}", 3, "struct type"},
    {"float4 view", "__global__ void k(float* y, const float* x) {\n  y[0] = reinterpret_cast<const float4*>(x)[0].x;\n}", 2, "reinterpret_cast of a pointer"},
};

TEST(DecyWgsl, WhatWgslCannotExpressIsNamedWithItsLine) {
  for (const Unsupported& u : kWgslUnsupported) {
    const Wgsl g = translate_wgsl(u.source);
    EXPECT_TRUE(g.text.empty()) << u.construct;
    bool found = false;
    for (const auto& e : g.errors) found |= e.loc.line == u.line && contains(e.message, u.message) && e.loc.file == "snippet.cu";
    EXPECT_TRUE(found) << u.construct << ": expected line " << u.line << " '" << u.message << "', got:\n" << errors(g);
  }
}

// The project's kernels (src/cuda/kernels): the f32 ones translate, u64 indices too; the u16 ones are refused by name.
TEST(DecyWgsl, ProjectKernelsTranslateOrAreRefusedByName) {
  const std::string layer = std::string(TRUENO_SOURCE_DIR) + "/src/cuda/kernels/layer_ops.cu";
  const std::string prefill = std::string(TRUENO_SOURCE_DIR) + "/src/cuda/kernels/prefill_ops.cu";
  for (const char* k : {"swiglu", "add_inplace", "attention_combine"}) {
    const Wgsl g = translate_wgsl_file(layer, k);
    EXPECT_TRUE(g.errors.empty()) << k << ": " << errors(g);
    EXPECT_TRUE(contains(g.text, "fn overlap_prologue() {")) << k;  // the prelude's helper, its asm under #if
    expect_valid_wgsl(g, std::string("layer_ops_") + k);
  }
  // Note [64-bit indices]: u64 index arithmetic (+, *, conversions of 32-bit values) in u32.
  const Wgsl ac = translate_wgsl_file(layer, "attention_combine");
  EXPECT_TRUE(ac.errors.empty()) << errors(ac);
  EXPECT_TRUE(contains(ac.text, "decy_b_o[decy_off_o + ((((u32(h) * u32(max_chunks)) + u32(c)) * u32(hd)) + u32(d))]")) << ac.text;
  expect_valid_wgsl(ac, "layer_ops_attention_combine");
  const Wgsl ar = translate_wgsl_file(prefill, "add_rows");
  EXPECT_TRUE(ar.errors.empty()) << errors(ar);
  EXPECT_TRUE(contains(ar.text, "decy_b_y[(decy_wid.y * u32(n)) + u32(i)] += decy_b_b[i];")) << ar.text;
  const Wgsl neg = translate_wgsl("__global__ void k(float* y, const float* x, int n) {\n  y[0] = x[-(long long)n * 3 + 7];\n}");
  EXPECT_TRUE(neg.errors.empty()) << errors(neg);
  EXPECT_TRUE(contains(neg.text, "decy_b_x[((0u - u32(n)) * 3u) + 7u]")) << neg.text;
  EXPECT_TRUE(contains(errors(translate_wgsl_file(layer, "kv_append")), "16-bit integer type 'u16 *__restrict' of parameter 'kc'"));
  EXPECT_TRUE(contains(errors(translate_wgsl_file(prefill, "cast_f16")), "16-bit integer"));
}

}  // namespace
// (From decy_warp32_test.cpp, whose GPU tests run in decy_gpu_tests without libclang.)
// The codegen: warpSize is 32, each shuffle kind a call of its shared-memory exchange, no subgroup extension.
TEST(DecyWarp32, ShufflesGoThroughSharedMemory) {
  const decy::Module m = decy::parse_source("snippet.cu", R"(
__global__ void k(float* __restrict__ y, unsigned long long* __restrict__ z) {
  float v = y[threadIdx.x];
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  v += __shfl_down_sync(0xffffffffu, v, 1) + __shfl_sync(0xffffffffu, v, 3);
  y[threadIdx.x] = v;
  z[threadIdx.x] = __shfl_xor_sync(0xffffffffu, z[threadIdx.x], 16);
}
)");
  const decy::Glsl g = decy::emit_glsl(decy::check(m, ""), "snippet.cu", {.warp32 = true});
  ASSERT_TRUE(g.errors.empty()) << g.errors[0].str();
  const auto has = [&](const char* s) { return g.text.find(s) != std::string::npos; };
  EXPECT_TRUE(has("for (int o = 32 / 2; o > 0; o >>= 1)")) << g.text;
  EXPECT_TRUE(has("v += decy_warp_xor_float(v, uint(o));")) << g.text;
  EXPECT_TRUE(has("decy_warp_down_float(v, 1u)") && has("decy_warp_idx_float(v, int(3))")) << g.text;
  EXPECT_TRUE(has("decy_warp_xor_uint64_t(z[gl_LocalInvocationID.x], 16u)")) << g.text;
  EXPECT_TRUE(has("shared float decy_warp_float[1024];") && has("// Warps: emulated (decy --warp32")) << g.text;
  EXPECT_FALSE(has("GL_KHR_shader_subgroup")) << g.text;
#ifdef DECY_GLSLC
  const std::string comp = ::testing::TempDir() + "/decy_warp32.comp", spv = ::testing::TempDir() + "/decy_warp32.spv";
  std::ofstream(comp) << g.text;
  EXPECT_EQ(std::system((std::string(DECY_GLSLC) + " --target-env=vulkan1.1 -Werror -fshader-stage=compute -o " + spv + " " + comp).c_str()), 0);
#endif
}

}  // namespace decy
