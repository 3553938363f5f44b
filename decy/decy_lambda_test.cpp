// decy on template helpers and lambdas (Note [Lambdas and template helpers], parse.cpp), 32-bit atomics,
// signbit and a for loop without an init: the GLSL they become, glslc accepting it, and the refusals named
// with their line.
#include <gtest/gtest.h>

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

Glsl translate(const std::string& src, const std::string& kernel = "") {
  return emit_glsl(check(parse_source("snippet.cu", src), kernel), "snippet.cu");
}

std::string errors(const Glsl& g) {
  std::string s;
  for (const auto& e : g.errors) s += e.str() + "\n";
  return s;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

void expect_compiles(const Glsl& g, const std::string& name) {
#ifdef DECY_GLSLC
  const std::string comp = ::testing::TempDir() + "/decy_" + name + ".comp", spv = ::testing::TempDir() + "/decy_" + name + ".spv";
  std::ofstream(comp) << g.text;
  const std::string cmd = std::string(DECY_GLSLC) + " --target-env=vulkan1.1 -Werror -fshader-stage=compute -o " + spv + " " + comp;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << g.text;
#else
  (void)g, (void)name;
#endif
}

// A template helper taking a lambda, a lambda held in a local and called by another lambda, a non-type
// template parameter: one helper per instance, each lambda a helper taking its captures first.
const char* kLambdas = R"(
template <class Load>
__device__ float sum(int n, Load load) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) m += load(i);
  return m;
}
template <int K>
__device__ int times(int v) { return v * K; }
extern "C" __global__ void k(const float* __restrict__ x, int n, float* __restrict__ out) {
  const int off = times<3>(1);
  auto at = [&](int i) { return x[i + off]; };
  out[0] = sum(n, at) + sum(n, [&](int i) { return at(i) * 2.0f; });
}
)";

TEST(DecyLambda, TemplateInstancesAndLambdasBecomeHelpers) {
  const Glsl g = translate(kLambdas);
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "int times_inst0(int v) {\n  return v * 3;\n}")) << g.text;
  EXPECT_TRUE(contains(g.text, "float lambda_12_0_x(uint x_off, int off, int i) {\n  return x[x_off + uint((i + off))];")) << g.text;
  // The second lambda captures `at`, itself a closure: its captured values, flattened.
  EXPECT_TRUE(contains(g.text, "float lambda_13_1_x(uint at_cap_x_off, int at_cap_off, int i) {\n  return lambda_12_0_x(at_cap_x_off, at_cap_off, i) * 2.0;")) << g.text;
  EXPECT_TRUE(contains(g.text, "m += lambda_12_0_x(load_cap_x_off, load_cap_off, i);")) << g.text;
  EXPECT_TRUE(contains(g.text, "decy_out[0] = (sum_inst1_x(n, 0u, off) + sum_inst2_x(n, 0u, off));")) << g.text;
  EXPECT_FALSE(contains(g.text, " at =")) << g.text;  // the local closure is no GLSL variable
  expect_compiles(g, "lambdas");
}

TEST(DecyLambda, AtomicsSignbitAndForWithoutInit) {
  const Glsl g = translate(R"(
__global__ void k(const float* __restrict__ x, unsigned* __restrict__ m, int* __restrict__ c, int n) {
  int i = threadIdx.x;
  for (; i < n; i += blockDim.x) {
    atomicMax(m + 1, __float_as_uint(fabsf(x[i])));
    if (signbit(x[i])) atomicAdd(c, 1);
  }
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "for (; i < n; i += int(gl_WorkGroupSize.x))")) << g.text;
  EXPECT_TRUE(contains(g.text, "atomicMax(m[(0u + 1u) + 0u], floatBitsToUint(abs(x[i])));")) << g.text;  // the element *(m + 1)
  EXPECT_TRUE(contains(g.text, "if ((floatBitsToUint(x[i]) >> 31u) != 0u)")) << g.text;
  EXPECT_TRUE(contains(g.text, "atomicAdd(c[0], 1);")) << g.text;
  expect_compiles(g, "atomics");
}

// Note [Local arrays given to helpers] (glsl.cpp): a local array given to a pointer parameter is an inout
// array parameter plus an offset; passed on from there, the helper's array again.
TEST(DecyLambda, LocalArraysGivenToHelpers) {
  const Glsl g = translate(R"(
__device__ void fill(float* v, int n) { for (int i = 0; i < n; ++i) v[i] = i; }
__device__ void fill_twice(float* v) { fill(v, 2); fill(v + 2, 2); }
__global__ void k(float* __restrict__ y) {
  float a[4];
  fill_twice(a);
  y[threadIdx.x] = a[0] + a[3];
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "void fill_twice_a(inout float v_arr[4], uint v_off) {")) << g.text;
  EXPECT_TRUE(contains(g.text, "fill_v_arr(v_arr, v_off, 2);")) << g.text;
  EXPECT_TRUE(contains(g.text, "fill_v_arr(v_arr, v_off + 2u, 2);")) << g.text;
  EXPECT_TRUE(contains(g.text, "v_arr[v_off + uint(i)] = float(i);")) << g.text;
  EXPECT_TRUE(contains(g.text, "fill_twice_a(a, 0u);")) << g.text;
  expect_compiles(g, "local_arrays");
}

// An array's initializer list: GLSL's array constructor, the elements left out zero as in C.
TEST(DecyLambda, ArrayInitializerLists) {
  const Glsl g = translate(R"(
__global__ void k(const uint4* __restrict__ r, float* __restrict__ y) {
  const unsigned w[4] = {r[0].x, r[0].y, r[0].z, r[0].w};
  float z[3] = {1.5f};
  y[threadIdx.x] = w[threadIdx.x & 3] + z[2];
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "uint w[4] = uint[4](r[0].x, r[0].y, r[0].z, r[0].w);")) << g.text;
  EXPECT_TRUE(contains(g.text, "float z[3] = float[3](1.5, float(0), float(0));")) << g.text;
  expect_compiles(g, "array_init");
}

// A switch without fallthrough: an if/else chain over a copy of its value, grouped labels or-ed, the default last.
TEST(DecyLambda, SwitchBecomesAnIfChain) {
  const Glsl g = translate(R"(
__global__ void k(float* y, int op) {
  float v;
  switch (op) {
    default: v = 4.0f; break;
    case 1:
    case 2: v = 2.0f; break;
    case 3: { const float s = 3.0f; v = s; break; }
  }
  y[0] = v;
}
)");
  ASSERT_TRUE(g.errors.empty()) << errors(g);
  EXPECT_TRUE(contains(g.text, "int decy_decy_switch_4 = op;\n    if ((decy_decy_switch_4 == 1) || (decy_decy_switch_4 == 2))")) << g.text;
  EXPECT_TRUE(contains(g.text, "if (decy_decy_switch_4 == 3)")) << g.text;
  EXPECT_TRUE(contains(g.text, "      else\n      {\n        v = 4.0;")) << g.text;
  EXPECT_FALSE(contains(g.text, "break")) << g.text;
  expect_compiles(g, "switch");
}

TEST(DecyLambda, RefusalsAreNamedWithTheirLine) {
  struct Case {
    const char* source;
    unsigned line;
    const char* message;
  };
  const Case cases[] = {
      {"__global__ void k(float* y) {\n  int n = 0;\n  auto f = [&](int i) { n += i; return n; };\n  y[0] = f(2);\n}", 3,
       "a lambda assigning to its capture 'n'"},
      {"__global__ void k(float* y) {\n  atomicMax(y, 1.0f);\n}", 2, "call to 'atomicMax'"},  // no float overload declared: clang's error
      {"__global__ void k(unsigned* y) {\n  y[0] = __funnelshift_r(y[1], y[2], 3u);\n}", 2, "call to '__funnelshift_r'"},
      {"__global__ void k(int* y) {\n  for (int i = 0; i < 4; ++i) {\n    switch (y[i]) { case 0: if (i > 2) break; y[i] = 1; break; }\n  }\n}", 3,
       "breaks out of the switch early"},
  };
  for (const Case& c : cases) {
    const Glsl g = translate(c.source);
    bool found = false;
    for (const auto& e : g.errors) found |= e.loc.line == c.line && contains(e.message, c.message);
    EXPECT_TRUE(found) << c.message << ", got:\n" << errors(g);
  }
}

// WGSL: the same lambdas (helpers are target-neutral IR); atomics and signbit are refused by name.
TEST(DecyLambda, WgslTakesTheLambdasAndRefusesAtomics) {
  const Wgsl w = emit_wgsl(check(parse_source("snippet.cu", kLambdas), ""), "snippet.cu", {});
  EXPECT_TRUE(w.errors.empty()) << (w.errors.empty() ? "" : w.errors[0].str());
  EXPECT_TRUE(contains(w.text, "fn decy_lambda_12_0_x(decy_off_x_in: u32, off: i32, i: i32) -> f32 {")) << w.text;
  if (test::wgsl_runner_missing().empty()) {  // Dawn validates it (skipped silently where the runner cannot run)
    const std::string path = ::testing::TempDir() + "/decy_lambdas_" + std::to_string(::getpid()) + ".wgsl";
    std::ofstream(path, std::ios::binary) << w.text;
    std::string log;
    EXPECT_EQ(test::run_wgsl_runner("--validate '" + path + "'", &log), 0) << log << "\n" << w.text;
  }
  const Wgsl a = emit_wgsl(check(parse_source("snippet.cu", "__global__ void k(unsigned* m) {\n  atomicMax(m, 3u);\n}"), ""), "snippet.cu", {});
  ASSERT_FALSE(a.errors.empty());
  EXPECT_EQ(a.errors[0].loc.line, 2u);
  EXPECT_TRUE(contains(a.errors[0].message, "atomicMax")) << a.errors[0].str();
}

}  // namespace
}  // namespace decy
