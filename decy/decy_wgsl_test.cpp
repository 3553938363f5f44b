// decy's WGSL target end to end: the kernels of testdata/kernels.cu and the project's f32 kernels translated
// to WGSL (in process, as `decy translate --target wgsl` does), run under Dawn by decy/wgsl_runner
// (Node + npm webgpu on Chromium's SwiftShader Vulkan driver) against the CPU references of
// decy_vulkan_test.cpp, under the same contracts/gpu/decy.yaml bounds. Dawn compiling the module is the WGSL
// validator. A visible skip without node, the npm package (scripts/setup.sh --deps) or the SwiftShader
// driver (Debian's chromium); a failure when they are there and the output is wrong.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>


#include "check.h"
#include "mixed_ops_ref.h"
#include "parse.h"
#include "support/gpu_contract.h"
#include "trueno/ops.h"
#include "wgsl.h"
#include "wgsl_runner_test_support.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<char>;

#define DECY_REQUIRE_DAWN()                                                 \
  do {                                                                      \
    const std::string why_ = decy::test::wgsl_runner_missing();             \
    if (!why_.empty()) GTEST_SKIP() << "skipped: cannot run WGSL: " << why_; \
  } while (0)

using decy::test::read_text;
int node(const std::string& args, std::string* log) { return decy::test::run_wgsl_runner(args, log); }

// The kernel translated to WGSL, written to the temporary folder; its path in *path.
decy::Wgsl translate(const std::string& file, const std::string& kernel, bool subgroups, std::string* path) {
  decy::Wgsl w = decy::emit_wgsl(decy::check(decy::parse_file(file), kernel), file, {subgroups});
  // Per process: ctest -j runs the tests of this binary side by side.
  *path = ::testing::TempDir() + "/decy_" + fs::path(file).stem().string() + "_" + kernel + "_" + std::to_string(::getpid()) + ".wgsl";
  std::ofstream(*path, std::ios::binary) << w.text;
  return w;
}

// 4-byte uniform members, in order (DecyParams: i32, u32 and f32 only).
struct Field {
  std::string type;
  std::uint32_t bits;
};
Field i32(std::int32_t v) { return {"i32", static_cast<std::uint32_t>(v)}; }
Field u32(std::uint32_t v) { return {"u32", v}; }
Field f32(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return {"f32", b};
}

template <class T>
Bytes bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <class T>
std::vector<T> values(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct Launch {
  std::string file, kernel;
  int block = 64;
  std::array<int, 3> grid{1, 1, 1};
  bool subgroups = false;
  std::vector<Bytes> buffers;  // one per pointer parameter, in order
  std::vector<Field> uniforms;  // one per scalar parameter, in order
};

// Translates and runs the kernel; the contents of every buffer after the dispatch (empty on a failure,
// which the test has then recorded).
std::vector<Bytes> run(const Launch& l) {
  std::string wgsl;
  const decy::Wgsl w = translate(l.file, l.kernel, l.subgroups, &wgsl);
  for (const auto& e : w.errors) ADD_FAILURE() << e.str();
  if (!w.errors.empty()) return {};
  EXPECT_EQ(w.bindings.size(), l.buffers.size()) << l.kernel;
  EXPECT_EQ(w.uniforms.size(), l.uniforms.size()) << l.kernel;
  if (w.bindings.size() != l.buffers.size() || w.uniforms.size() != l.uniforms.size()) return {};
  const std::string dir = fs::path(wgsl).replace_extension().string();
  fs::create_directories(dir);
  std::string args = "--wgsl '" + wgsl + "' --block " + std::to_string(l.block) + " --grid " + std::to_string(l.grid[0]) + "," +
                     std::to_string(l.grid[1]) + "," + std::to_string(l.grid[2]) + (l.subgroups ? " --subgroups" : "");
  for (std::size_t i = 0; i < l.buffers.size(); ++i) {
    const std::string in = dir + "/in" + std::to_string(i) + ".bin", out = dir + "/out" + std::to_string(i) + ".bin";
    std::ofstream(in, std::ios::binary).write(l.buffers[i].data(), static_cast<std::streamsize>(l.buffers[i].size()));
    args += " --buffer '" + in + "' --out " + std::to_string(i) + "='" + out + "'";
  }
  if (!l.uniforms.empty()) {
    Bytes u;
    for (std::size_t i = 0; i < l.uniforms.size(); ++i) {
      EXPECT_EQ(w.uniforms[i].type, l.uniforms[i].type) << l.kernel << " uniform " << w.uniforms[i].name;
      EXPECT_EQ(w.uniforms[i].offset, u.size()) << l.kernel << " uniform " << w.uniforms[i].name;
      u.resize(u.size() + 4);
      std::memcpy(u.data() + u.size() - 4, &l.uniforms[i].bits, 4);
    }
    std::ofstream(dir + "/uniform.bin", std::ios::binary).write(u.data(), static_cast<std::streamsize>(u.size()));
    args += " --uniform '" + dir + "/uniform.bin'";
  }
  std::string log;
  const int status = node(args, &log);
  EXPECT_EQ(status, 0) << l.kernel << ": the runner failed:\n" << log << "\n" << w.text;
  if (status != 0) return {};
  if (const auto at = log.find("run_wgsl: "); at != std::string::npos)  // the runner's line: adapter, grid, time
    std::printf("%s", log.substr(at, log.find('\n', at) - at + 1).c_str());
  std::vector<Bytes> outs;
  for (std::size_t i = 0; i < l.buffers.size(); ++i) {
    const std::string s = read_text(dir + "/out" + std::to_string(i) + ".bin");
    outs.emplace_back(s.begin(), s.end());
    EXPECT_EQ(outs.back().size(), l.buffers[i].size()) << l.kernel << " binding " << i;
  }
  return outs;
}

std::mt19937_64& rng() {
  static std::mt19937_64 r(trueno::test::gpu_test_seed("decy wgsl"));
  return r;
}
const std::string kKernels = std::string(DECY_TESTDATA_DIR) + "/kernels.cu";
const std::string kLayerOps = std::string(TRUENO_SOURCE_DIR) + "/src/cuda/kernels/layer_ops.cu";
const std::string kPrefillOps = std::string(TRUENO_SOURCE_DIR) + "/src/cuda/kernels/prefill_ops.cu";

TEST(DecyWgslDawn, AddRowsBiasMatchesTheCpu) {
  DECY_REQUIRE_DAWN();
  const int rows = 5, n = 300, block = 64;
  const auto y = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  const auto b = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu = y;
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < n; ++i) cpu[static_cast<std::size_t>(r) * n + i] += b[i];
  const auto out = run({kKernels, "add_rows_bias", block, {(n + block - 1) / block, rows, 1}, false, {bytes(y), bytes(b)}, {i32(n)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "add_rows_bias", values<float>(out[0]), cpu, "wgsl 5 x 300");
}

TEST(DecyWgslDawn, SwigluMatchesTheCpu) {
  DECY_REQUIRE_DAWN();
  const int n = 1000, block = 128, groups = 3;  // fewer threads than values: the grid-stride loop
  const auto g = trueno::test::random_normal(n, rng(), 2.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu(n);
  for (int i = 0; i < n; ++i) cpu[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  const auto out = run({kKernels, "swiglu", block, {groups, 1, 1}, false, {bytes(g), bytes(u), bytes(std::vector<float>(n))}, {i32(n)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "swiglu", values<float>(out[2]), cpu, "wgsl 1000");
}

std::vector<float> row_sums(const std::vector<float>& x, int rows, int n, float scale) {
  std::vector<float> out(rows);
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += x[static_cast<std::size_t>(r) * n + i];
    out[r] = static_cast<float>(s) * scale;
  }
  return out;
}

TEST(DecyWgslDawn, RowSumThroughSharedMemoryMatchesTheCpu) {
  DECY_REQUIRE_DAWN();
  const int rows = 7, n = 1000, block = 256;  // block = ROW_SUM_THREADS, the shared array's size
  const auto x = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  const auto out = run({kKernels, "row_sum_shared", block, {rows, 1, 1}, false, {bytes(x), bytes(std::vector<float>(rows))}, {i32(n)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "row_sum_shared", values<float>(out[1]), row_sums(x, rows, n, 1.0f), "wgsl 7 x 1000");
}

TEST(DecyWgslDawn, RowSumThroughWarpShufflesMatchesTheCpu) {
  DECY_REQUIRE_DAWN();
  std::string info;
  ASSERT_EQ(node("--adapter", &info), 0) << info;
  unsigned lo = 0, hi = 0, has = 0;
  const auto at = info.find("subgroup_min_size");
  ASSERT_NE(at, std::string::npos) << info;
  ASSERT_EQ(std::sscanf(info.c_str() + at, "subgroup_min_size %u subgroup_max_size %u subgroups %u", &lo, &hi, &has), 3) << info;
  std::printf("%s", info.c_str());
  if (!has) GTEST_SKIP() << "skipped: the adapter has no 'subgroups' feature";
  // The kernel's second stage sums the per-warp values with one warp: at most warpSize warps per block, and
  // a block of whole warps: it needs to know the subgroup size (SwiftShader's: 4, a block of 16).
  if (lo != hi || lo == 0) GTEST_SKIP() << "skipped: the subgroup size is not fixed (" << lo << ".." << hi << ")";
  const int rows = 6, n = 777, block = static_cast<int>(std::min(256u, lo * lo));
  const auto x = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  const auto out = run({kKernels, "row_sum_warp", block, {rows, 1, 1}, true, {bytes(x), bytes(std::vector<float>(rows))}, {i32(n), f32(0.5f)}});
  if (out.empty()) return;
  std::printf("subgroup size %u, block %d\n", lo, block);
  trueno::test::expect_gpu_contract("decy", "row_sum_warp", values<float>(out[1]), row_sums(x, rows, n, 0.5f), "wgsl 6 x 777");
}

TEST(DecyWgslDawn, SignedDivisionAndRemainderAreCs) {
  DECY_REQUIRE_DAWN();
  const int n = 400, block = 64;
  std::vector<std::int32_t> x(n);
  std::uniform_int_distribution<std::int32_t> d(-100000, 100000);
  for (auto& v : x) v = d(rng());
  for (const int m : {7, -7}) {
    const std::vector<std::int32_t> zero(n);
    const auto out = run({kKernels, "div_rem", block, {(n + block - 1) / block, 1, 1}, false, {bytes(x), bytes(zero), bytes(zero)}, {i32(m), i32(n)}});
    if (out.empty()) return;
    const auto q = values<std::int32_t>(out[1]), r = values<std::int32_t>(out[2]);
    std::vector<float> want, got;
    for (int i = 0; i < n; ++i) {
      want.push_back(static_cast<float>(x[i] / m)), want.push_back(static_cast<float>(x[i] % m));
      got.push_back(static_cast<float>(q[i])), got.push_back(static_cast<float>(r[i]));
    }
    trueno::test::expect_gpu_contract("decy", "div_rem", got, want, m > 0 ? "wgsl m = 7" : "wgsl m = -7");  // |values| < 2^24: exact
  }
}

// What WGSL spells differently from CUDA (a do-while, ?: as select, unsigned negation, shift counts, an
// arithmetic >>=, a helper reading threadIdx through a view), against the same C++ on the CPU.
TEST(DecyWgslDawn, MixedIntegerOpsAndControlFlowAreCs) {
  DECY_REQUIRE_DAWN();
  const int n = 1000, block = 64;  // a multiple of 4: mix_bits' p[threadIdx.x % 4] is x[i]
  std::vector<std::uint32_t> x(n);
  std::uniform_int_distribution<std::uint32_t> d;
  for (auto& v : x) v = d(rng());
  std::vector<std::uint32_t> want_y;
  std::vector<std::int32_t> want_z;
  decy::test::mixed_ops_ref(x, want_y, want_z);
  const auto out = run({kKernels, "mixed_ops", block, {(n + block - 1) / block, 1, 1}, false,
                        {bytes(x), bytes(std::vector<std::uint32_t>(n)), bytes(std::vector<std::int32_t>(n))}, {i32(n)}});
  if (out.empty()) return;
  const auto got = decy::test::halves(values<std::uint32_t>(out[1]), values<std::int32_t>(out[2]));
  trueno::test::expect_gpu_contract("decy", "mixed_ops", got, decy::test::halves(want_y, want_z), "wgsl 1000");
}

// The project's own CUDA kernels (src/cuda/kernels) through decy, against the CPU ops. Of the others decy
// translates to GLSL, kv_append and cast_f16 store u16 and are refused for WGSL, as is softmax_causal
// (DecyWgsl.ProjectKernelsTranslateOrAreRefusedByName).
TEST(DecyWgslDawn, ProjectSwigluAndAddMatchTheCpu) {
  DECY_REQUIRE_DAWN();
  const int n = 1000, block = 256, groups = (n + block - 1) / block;
  const auto g = trueno::test::random_normal(n, rng(), 2.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu(n);
  trueno::ops::swiglu(g, u, cpu);
  auto out = run({kLayerOps, "swiglu", block, {groups, 1, 1}, false, {bytes(g), bytes(u)}, {i32(n)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "layer_ops_swiglu", values<float>(out[0]), cpu, "wgsl 1000");
  trueno::ops::add(g, u, cpu);
  out = run({kLayerOps, "add_inplace", block, {groups, 1, 1}, false, {bytes(g), bytes(u)}, {i32(n)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "layer_ops_add_inplace", values<float>(out[0]), cpu, "wgsl 1000");
}

// prefill_ops.cu's add_rows: a u64 row offset, computed in u32 (Note [64-bit indices], check_wgsl.cpp).
TEST(DecyWgslDawn, ProjectAddRowsMatchesTheCpu) {
  DECY_REQUIRE_DAWN();
  const int rows = 4, n = 333, block = 64;
  const auto y = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  const auto b = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu(y.size());
  for (int r = 0; r < rows; ++r)
    trueno::ops::add(std::span(y).subspan(static_cast<std::size_t>(r) * n, n), b, std::span(cpu).subspan(static_cast<std::size_t>(r) * n, n));
  const auto out = run({kPrefillOps, "add_rows", block, {(n + block - 1) / block, rows, 1}, false, {bytes(y), bytes(b)}, {i32(n)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "prefill_ops_add_rows", values<float>(out[0]), cpu, "wgsl 4 x 333");
}

// layer_ops.cu's attention_combine: a helper taking two buffers, *pos, u64 indices computed in u32.
TEST(DecyWgslDawn, ProjectAttentionCombineMatchesTheCpu) {
  DECY_REQUIRE_DAWN();
  const int heads = 3, hd = 40, max_chunks = 5, pos = 200, chunk = 64, n_chunks = (pos + 1 + chunk - 1) / chunk, block = 32;
  const auto o = trueno::test::random_normal(static_cast<std::size_t>(heads) * max_chunks * hd, rng(), 1.0f);
  std::vector<float> cpu(static_cast<std::size_t>(heads) * hd);
  for (int h = 0; h < heads; ++h)
    for (int d = 0; d < hd; ++d) {
      float acc = 0.0f;  // the kernel's order: exact
      for (int c = 0; c < n_chunks; ++c) acc += o[(static_cast<std::size_t>(h) * max_chunks + c) * hd + d];
      cpu[static_cast<std::size_t>(h) * hd + d] = acc;
    }
  const auto out = run({kLayerOps, "attention_combine", block, {heads, 1, 1}, false,
                        {bytes(o), bytes(std::vector<std::int32_t>{pos}), bytes(std::vector<float>(cpu.size()))}, {i32(hd), i32(max_chunks)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "layer_ops_attention_combine", values<float>(out[2]), cpu, "wgsl 3 heads x 40, 4 chunks");
}

// grad_ops.cu's grad_embedding_cols (ids outside the table skipped; every bit: f32 additions in token order)
// and grad_adamw (a grid-stride loop over three workgroups), as decy_training_test.cpp runs them on Vulkan.
TEST(DecyWgslDawn, ProjectTrainingKernelsMatchTheCpu) {
  DECY_REQUIRE_DAWN();
  const std::string grad_ops = std::string(TRUENO_SOURCE_DIR) + "/src/cuda/kernels/grad_ops.cu";
  const std::uint32_t tokens = 9, dim = 100, table_rows = 6;
  const std::vector<std::int32_t> ids = {3, 0, 3, 5, -2, 6, 1, 3, 5};
  const auto dy = trueno::test::random_normal(tokens * dim, rng(), 1.0f), table0 = trueno::test::random_normal(table_rows * dim, rng(), 1.0f);
  std::vector<float> want = table0;  // accumulating
  for (std::uint32_t t = 0; t < tokens; ++t)
    if (ids[t] >= 0 && static_cast<std::uint32_t>(ids[t]) < table_rows)
      for (std::uint32_t j = 0; j < dim; ++j) want[ids[t] * dim + j] += dy[t * dim + j];
  auto out = run({grad_ops, "grad_embedding_cols", 64, {2, 1, 1}, false, {bytes(ids), bytes(dy), bytes(table0)},
                  {u32(tokens), u32(dim), u32(table_rows), i32(1)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_embedding_cols", values<float>(out[2]), want, "wgsl, accumulating");
  const std::uint32_t n = 1000;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f, c1 = 1.0f - 0.9f * 0.9f, c2 = 1.0f - 0.999f * 0.999f;
  const auto w = trueno::test::random_normal(n, rng(), 1.0f), g = trueno::test::random_normal(n, rng(), 0.1f);
  const auto m = trueno::test::random_normal(n, rng(), 0.01f);
  auto v = trueno::test::random_normal(n, rng(), 0.001f);
  for (float& x : v) x = std::fabs(x);
  std::vector<float> w1(n), m1(n), v1(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const double mi = double{b1} * m[i] + (1.0 - double{b1}) * g[i], vi = double{b2} * v[i] + (1.0 - double{b2}) * g[i] * g[i];
    m1[i] = static_cast<float>(mi), v1[i] = static_cast<float>(vi);
    w1[i] = static_cast<float>(w[i] - double{lr} * ((mi / c1) / (std::sqrt(vi / c2) + eps) + double{wd} * w[i]));
  }
  out = run({grad_ops, "grad_adamw", 64, {3, 1, 1}, false, {bytes(w), bytes(g), bytes(m), bytes(v)},
             {u32(n), f32(lr), f32(b1), f32(b2), f32(eps), f32(wd), f32(c1), f32(c2)}});
  if (out.empty()) return;
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_adamw", values<float>(out[0]), w1, "wgsl w");
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_adamw", values<float>(out[2]), m1, "wgsl m");
  trueno::test::expect_gpu_contract("decy", "grad_ops_grad_adamw", values<float>(out[3]), v1, "wgsl v");
}

// contracts/gpu/decy.yaml: every `wgsl_test` names a test of this binary; an op without one says why (`wgsl`).
TEST(DecyWgslContracts, EveryWgslTestExistsOrTheEntrySaysWhyNot) {
  std::set<std::string> tests;
  const auto* u = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < u->total_test_suite_count(); ++i)
    for (int j = 0; j < u->GetTestSuite(i)->total_test_count(); ++j)
      tests.insert(std::string(u->GetTestSuite(i)->name()) + "." + u->GetTestSuite(i)->GetTestInfo(j)->name());
  const YAML::Node ops = YAML::LoadFile(std::string(TRUENO_CONTRACTS_DIR) + "/gpu/decy.yaml")["ops"];
  for (const auto& kv : ops) {
    const std::string op = kv.first.as<std::string>();
    if (kv.second["wgsl_test"]) {
      EXPECT_TRUE(tests.contains(kv.second["wgsl_test"].as<std::string>())) << op << ": no test " << kv.second["wgsl_test"].as<std::string>();
    } else {
      EXPECT_TRUE(kv.second["wgsl"].IsDefined()) << op << ": neither wgsl_test nor wgsl (why there is none)";
    }
  }
}

}  // namespace
