// The WebGPU backend's shaders against trueno's CPU kernels by contracts/gpu/webgpu.yaml (Note [WebGPU
// tests: inputs and references in C++]): WebGpuDevice.* run the glue in Node on Dawn + SwiftShader and
// skip visibly without them; WebGpu.* need no device.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <tuple>

#include "contract/contract_spec.h"
#include "support/gpu_contract.h"
#include "trueno/ops.h"
#include "trueno/quant.h"
#include "webgpu/webgpu_test_support.h"

namespace trueno::webgpu {
namespace {

using namespace testing;

std::uint64_t seed() { return test::gpu_test_seed("webgpu"); }

std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng, float scale = 1.0f) { return test::random_normal(n, rng, scale); }

void expect_contract(const std::string& op, const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what) {
  test::expect_gpu_contract("webgpu", op, gpu, cpu, what);
}

std::vector<std::byte> quantized(QuantType type, const std::vector<float>& wf, std::size_t rows, std::size_t cols) {
  const std::size_t rb = quant_row_bytes(type, cols);
  std::vector<std::byte> w(rows * rb);
  for (std::size_t r = 0; r < rows; ++r) quantize(type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
  return w;
}

std::vector<float> round_f16(const std::vector<float>& x) {
  std::vector<std::uint16_t> h(x.size());
  std::vector<float> out(x.size());
  ops::f32_to_f16(x, h);
  ops::f16_to_f32(h, out);
  return out;
}

// Every weight type gemv reads (the CPU's quant_matvec types but the activation format Q8_K).
std::vector<QuantType> weight_types() {
  std::vector<QuantType> types;
  for (QuantType t : kQuantTypes)
    if (t != QuantType::Q8_K) types.push_back(t);
  return types;
}

// Every shader (shaders/*.wgsl but common.wgsl, which is prepended to the others) has an entry in
// contracts/gpu/webgpu.yaml and is compiled by the glue, and every entry names a test of this binary.
TEST(WebGpu, EveryShaderHasAContract) {
  const YAML::Node root = YAML::LoadFile(test::contracts_dir() + "/gpu/webgpu.yaml");
  std::set<std::string> covered, tests;
  const ::testing::UnitTest& ut = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < ut.total_test_suite_count(); ++i)
    for (int j = 0; j < ut.GetTestSuite(i)->total_test_count(); ++j)
      tests.insert(std::string(ut.GetTestSuite(i)->name()) + "." + ut.GetTestSuite(i)->GetTestInfo(j)->name());
  for (const auto& kv : root["ops"]) {
    const std::string op = kv.first.as<std::string>();
    ASSERT_TRUE(kv.second["shader"]) << op << " names no shader";
    covered.insert(kv.second["shader"].as<std::string>());
    const std::string t = kv.second["test"].as<std::string>("");
    EXPECT_TRUE(tests.contains(t)) << "contracts/gpu/webgpu.yaml: " << op << " names test '" << t << "', which does not exist";
  }
  std::size_t shaders = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TRUENO_SOURCE_DIR) + "/src/webgpu/shaders")) {
    const std::string name = e.path().stem().string();
    if (e.path().extension() != ".wgsl" || name == "common") continue;
    ++shaders;
    EXPECT_TRUE(covered.contains(name)) << "shader " << name << ".wgsl has no contract in contracts/gpu/webgpu.yaml";
  }
  EXPECT_GE(shaders, 10u);
  // ... and the glue compiles each one (its SHADERS list names every file but common.wgsl).
  const std::string glue = read_text(std::string(TRUENO_SOURCE_DIR) + "/src/webgpu/js/trueno_webgpu.mjs");
  const auto at = glue.find("export const SHADERS = [");
  ASSERT_NE(at, std::string::npos) << "trueno_webgpu.mjs has no SHADERS list";
  const std::string list = glue.substr(at, glue.find("];", at) - at);
  for (const auto& e : std::filesystem::directory_iterator(std::string(TRUENO_SOURCE_DIR) + "/src/webgpu/shaders")) {
    const std::string name = e.path().stem().string();
    if (name != "common") {
      EXPECT_NE(list.find("'" + name + "'"), std::string::npos) << name << ".wgsl is not in the glue's SHADERS list";
    }
  }
  for (QuantType t : weight_types())
    EXPECT_TRUE(root["ops"]["gemv_" + std::string(quant_info(t).name)]) << "no gemv contract for " << quant_info(t).name;
}

// y = W x for every weight type, 1 and 3 activation rows, shapes that end Q4_0/Q8_0/Q6_K rows 2 bytes
// past a word (as VulkanGpu.GemvOfEveryWeightTypeMatchesTheCpu); run with the glue's defaults, with a
// binding limit of 8 KiB that splits every matrix into pieces (Note [WebGPU weights in pieces]), and with
// 64 and 1 invocations per row (Note [WebGPU GEMV rows per workgroup]; the default is 8).
TEST(WebGpuDevice, GemvOfEveryWeightTypeMatchesTheCpu) {
  TRUENO_REQUIRE_WEBGPU();
  std::mt19937_64 rng(seed() + 1);
  using Shapes = std::vector<std::pair<std::size_t, std::size_t>>;
  const Shapes k_shapes = {{64, 256}, {67, 512}, {300, 256}};
  const Shapes b32_shapes = {{64, 256}, {67, 288}, {300, 256}};
  const Shapes float_shapes = {{64, 64}, {37, 334}, {300, 64}};
  const std::pair<std::size_t, std::size_t> configs[] = {{0, 0}, {8192, 0}, {0, 64}, {0, 1}};  // {max binding bytes, threads per row}
  for (const auto& [max_binding, tpr] : configs) {
    const std::string config = max_binding ? " in pieces of <= 8192 bytes" : tpr ? " " + std::to_string(tpr) + " invocations per row" : "";
    Job job("gemv_" + std::to_string(max_binding) + "_" + std::to_string(tpr), max_binding, tpr);
    struct Check {
      const Call* call;
      std::string op, what;
      std::vector<float> want;
    };
    std::vector<Check> checks;
    for (QuantType type : weight_types()) {
      const std::size_t block = quant_info(type).block_elems;
      const std::string name(quant_info(type).name);
      for (const auto& [rows, cols] : block == 1 ? float_shapes : block == 32 ? b32_shapes : k_shapes) {
        for (std::size_t m : {std::size_t{1}, std::size_t{3}}) {
          const auto w = quantized(type, random_vector(rows * cols, rng, 0.05f), rows, cols);
          const auto x = random_vector(m * cols, rng);
          const auto x_cpu = type == QuantType::F16 ? round_f16(x) : x;  // realizar's CPU pass rounds them
          std::vector<float> want(m * rows);
          for (std::size_t r = 0; r < m; ++r)
            quant_matvec(type, w, rows, cols, std::span(x_cpu).subspan(r * cols, cols), std::span(want).subspan(r * rows, rows));
          const Call& c = job.call("gemv").in("w", w).in("x", x).zeros("y", m * rows * 4).text("type", name).buf("w", "w").buf("x", "x")
                              .buf("y", "y").arg("rows", rows).arg("cols", cols).arg("m", m).out("y");
          checks.push_back({&c, "gemv_" + name, std::to_string(rows) + "x" + std::to_string(cols) + " m=" + std::to_string(m) + config, want});
        }
      }
    }
    // accumulate: y (holding W x already) += W x.
    const std::size_t rows = 96, cols = 512;
    const auto w = quantized(QuantType::Q4_K, random_vector(rows * cols, rng, 0.05f), rows, cols);
    const auto x = random_vector(cols, rng);
    std::vector<float> y(rows), twice(rows);
    quant_matvec(QuantType::Q4_K, w, rows, cols, x, y);
    ops::add(y, y, twice);
    const Call& acc = job.call("gemv").in("w", w).in("x", x).in("y", y).text("type", "q4_k").buf("w", "w").buf("x", "x").buf("y", "y")
                          .arg("rows", rows).arg("cols", cols).flag("accumulate", true).out("y");
    checks.push_back({&acc, "gemv_q4_k", "accumulated onto y", twice});
    ASSERT_TRUE(job.run()) << "the harness failed (its log is above)";
    for (const Check& k : checks) expect_contract(k.op, Job::output(*k.call, "y"), k.want, k.what);
  }
}

// Rows of every weight type dequantized (the token embedding lookup): prefill's several tokens in one
// call, the first and last rows, a repeated token, and tables bound in pieces of 16 KiB.
TEST(WebGpuDevice, EmbedMatchesTheCpuDequantization) {
  TRUENO_REQUIRE_WEBGPU();
  std::mt19937_64 rng(seed() + 2);
  for (std::size_t max_binding : {std::size_t{0}, std::size_t{16384}}) {
    Job job(max_binding ? "embed_pieces" : "embed", max_binding);
    std::vector<std::tuple<const Call*, std::string, std::vector<float>>> checks;
    for (QuantType type : weight_types()) {
      const std::size_t rows = 97, cols = quant_info(type).block_elems == 1 ? 334 : 512, rb = quant_row_bytes(type, cols);
      const auto w = quantized(type, random_vector(rows * cols, rng, 0.5f), rows, cols);
      const std::vector<int> tokens = {5, 0, 96, 5, 41};
      std::vector<float> want(tokens.size() * cols);
      for (std::size_t t = 0; t < tokens.size(); ++t)
        dequantize(QuantRow::view(type, std::span(w).subspan(tokens[t] * rb, rb), cols), std::span(want).subspan(t * cols, cols));
      const Call& c = job.call("embed").in("w", w).zeros("o", want.size() * 4, 0x7fc00000u).text("type", std::string(quant_info(type).name))
                          .buf("w", "w").buf("out", "o").arg("rows", rows).arg("cols", cols).ints("tokens", tokens).out("o");
      checks.emplace_back(&c, std::string(quant_info(type).name) + (max_binding ? " in pieces" : ""), want);
    }
    ASSERT_TRUE(job.run()) << "the harness failed (its log is above)";
    for (const auto& [call, what, want] : checks) expect_contract("embed", Job::output(*call, "o"), want, what);
  }
}

TEST(WebGpuDevice, ElementwiseLayerOpsMatchTheCpu) {
  TRUENO_REQUIRE_WEBGPU();
  std::mt19937_64 rng(seed() + 3);
  Job job("elementwise");
  struct Check {
    const Call* call;
    std::string op, buffer, what;
    std::vector<float> want;
  };
  std::vector<Check> checks;
  for (std::size_t n : {64u, 172u, 4096u}) {
    const auto x = random_vector(n, rng), y = random_vector(n, rng), w = random_vector(n, rng);
    const auto x3 = random_vector(3 * n, rng);
    std::vector<float> want(3 * n);
    for (int r = 0; r < 3; ++r) ops::rmsnorm(std::span(x3).subspan(r * n, n), w, 1e-5f, std::span(want).subspan(r * n, n));
    checks.push_back({&job.call("rmsnorm").in("x", x3).in("w", w).zeros("o", 3 * n * 4).buf("x", "x").buf("weight", "w").buf("out", "o")
                           .arg("n", n).arg("count", 3).arg("eps", 1e-5).out("o"),
                      "rmsnorm", "o", std::to_string(n) + " x 3 rows", want});
    std::vector<float> sw(n);
    ops::swiglu(x, y, sw);
    checks.push_back({&job.call("swiglu").in("g", x).in("u", y).buf("g", "g").buf("u", "u").arg("n", n).out("g"), "swiglu", "g", std::to_string(n), sw});
    std::vector<float> sum(n);
    ops::add(x, y, sum);
    checks.push_back({&job.call("add").in("y", x).in("x", y).buf("y", "y").buf("x", "x").arg("n", n).out("y"), "add", "y", std::to_string(n), sum});
  }
  // A bias on every row: y[i] += b[i % 32].
  const auto y = random_vector(4 * 32, rng), bias = random_vector(32, rng);
  std::vector<float> want(y.size());
  for (std::size_t r = 0; r < 4; ++r) ops::add(std::span(y).subspan(r * 32, 32), bias, std::span(want).subspan(r * 32, 32));
  checks.push_back({&job.call("add").in("y", y).in("x", bias).buf("y", "y").buf("x", "x").arg("n", y.size()).arg("period", 32).out("y"), "add", "y",
                    "bias on 4 rows of 32", want});
  ASSERT_TRUE(job.run()) << "the harness failed (its log is above)";
  for (const Check& k : checks) expect_contract(k.op, Job::output(*k.call, k.buffer), k.want, k.what);
}

// The CPU forward pass's rope (realizar Session::rope) on rows consecutive positions from pos.
std::vector<float> cpu_rope(std::vector<float> v, int heads, int hd, int rope_dim, bool neox, const std::vector<float>* freqs, float ts, int pos, int rows) {
  for (int r = 0; r < rows; ++r) {
    float theta = static_cast<float>(pos + r);
    for (int i = 0; i < rope_dim / 2; ++i, theta *= ts) {
      const float t = freqs ? theta / (*freqs)[i] : theta, cs = std::cos(t), sn = std::sin(t);
      for (int h = 0; h < heads; ++h) {
        float* p = v.data() + (r * heads + h) * hd;
        const int a = neox ? i : 2 * i, b = neox ? i + rope_dim / 2 : 2 * i + 1;
        const float x0 = p[a], x1 = p[b];
        p[a] = x0 * cs - x1 * sn, p[b] = x0 * sn + x1 * cs;
      }
    }
  }
  return v;
}

TEST(WebGpuDevice, RopeAndKvAppendMatchTheCpu) {
  TRUENO_REQUIRE_WEBGPU();
  std::mt19937_64 rng(seed() + 4);
  Job job("rope_kv");
  struct Check {
    const Call* call;
    std::string what;
    std::vector<float> want;
  };
  std::vector<Check> checks;
  struct Shape { int heads, hd, rope_dim; bool neox, freqs; };
  for (Shape sh : {Shape{8, 8, 8, false, false}, Shape{4, 128, 128, false, true}, Shape{14, 64, 64, true, false}, Shape{4, 64, 32, false, false},
                   Shape{2, 64, 32, true, true}}) {
    for (int pos : {0, 1, 17, 4095}) {
      const int rows = pos == 17 ? 3 : 1;  // a prompt's rows at pos, pos + 1, pos + 2
      const auto v = random_vector(static_cast<std::size_t>(rows * sh.heads * sh.hd), rng);
      std::vector<float> freqs(sh.rope_dim / 2);
      for (std::size_t i = 0; i < freqs.size(); ++i) freqs[i] = 1.0f + static_cast<float>(i % 7);
      const float ts = std::pow(500000.0f, -2.0f / static_cast<float>(sh.rope_dim));
      Call& c = job.call("rope").in("v", v).in("pos", std::vector<std::int32_t>{pos}).buf("v", "v").buf("pos", "pos").arg("heads", sh.heads)
                    .arg("headDim", sh.hd).arg("ropeDim", sh.rope_dim).arg("thetaScale", ts).flag("neox", sh.neox).arg("rows", rows).out("v");
      if (sh.freqs) c.in("f", freqs).buf("freqs", "f");
      checks.push_back({&c,
                        std::to_string(sh.heads) + "x" + std::to_string(sh.hd) + (sh.neox ? " neox" : "") + (sh.freqs ? " freqs" : "") + " pos " +
                            std::to_string(pos) + " rows " + std::to_string(rows),
                        cpu_rope(v, sh.heads, sh.hd, sh.rope_dim, sh.neox, sh.freqs ? &freqs : nullptr, ts, pos, rows)});
    }
  }
  // kv_append: f16 into slots pos.. (2 rows), neighbours untouched; values across the f16 range (normal,
  // subnormal, overflowing, ties) round to nearest even like the CPU's conversion.
  const int n = 256, slots = 5, pos = 2, rows = 2;
  auto k = random_vector(rows * n, rng), v = random_vector(rows * n, rng, 1000.0f);
  const float specials[] = {0.0f, -0.0f, 1e-6f, -3e-7f, 6.1e-5f, 65504.0f, 65520.0f, 1e6f, -1e6f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 2.98e-8f};
  for (std::size_t i = 0; i < std::size(specials); ++i) k[i] = specials[i], k[n + i] = -specials[i];
  const Call& kv = job.call("kvAppend").in("k", k).in("v", v).in("pos", std::vector<std::int32_t>{pos}).zeros("kc", slots * n * 2)
                       .zeros("vc", slots * n * 2).buf("k", "k").buf("v", "v").buf("kCache", "kc").buf("vCache", "vc").buf("pos", "pos")
                       .arg("n", n).arg("rows", rows).out("kc").out("vc");
  ASSERT_TRUE(job.run()) << "the harness failed (its log is above)";
  for (const Check& c : checks) expect_contract("rope", Job::output(*c.call, "v"), c.want, c.what);
  const auto gk = Job::output<std::uint16_t>(kv, "kc"), gv = Job::output<std::uint16_t>(kv, "vc");
  std::vector<std::uint16_t> wk(k.size()), wv(v.size());
  ops::f32_to_f16(k, wk);
  ops::f32_to_f16(v, wv);
  std::vector<float> got, want;
  for (int i = 0; i < slots * n; ++i) {
    const int slot = i / n;
    const bool in = slot >= pos && slot < pos + rows;
    const std::size_t j = static_cast<std::size_t>((slot - pos) * n + i % n);
    got.push_back(static_cast<float>(gk[i])), got.push_back(static_cast<float>(gv[i]));
    want.push_back(in ? static_cast<float>(wk[j]) : 0.0f), want.push_back(in ? static_cast<float>(wv[j]) : 0.0f);
  }
  expect_contract("kv_append", got, want, "f16 bits, 2 rows into 5 slots");
}

// realizar's CPU attention for one head set at position pos (forward.cpp: q and the softmax weights
// rounded to f16, K and V from the f16 cache), as src/vulkan/attention_test.cpp restates it.
std::vector<float> cpu_attention(const float* q, const std::vector<std::uint16_t>& kc, const std::vector<std::uint16_t>& vc, std::size_t heads,
                                 std::size_t hd, std::size_t group, std::size_t kv_row, std::size_t pos) {
  const std::size_t n = pos + 1;
  std::vector<float> out(heads * hd), kf(kc.size()), vf(vc.size()), qh(hd), s(n);
  std::vector<std::uint16_t> half(std::max(n, hd));
  ops::f16_to_f32(kc, kf);
  ops::f16_to_f32(vc, vf);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t kvh = h / group;
    ops::f32_to_f16(std::span(q + h * hd, hd), std::span(half).first(hd));
    ops::f16_to_f32(std::span(half).first(hd), qh);
    for (std::size_t t = 0; t < n; ++t) {
      float dot = 0.0f;
      for (std::size_t d = 0; d < hd; ++d) dot += kf[t * kv_row + kvh * hd + d] * qh[d];
      s[t] = dot / std::sqrt(static_cast<float>(hd));
    }
    ops::softmax(s, s);
    ops::f32_to_f16(s, std::span(half).first(n));
    ops::f16_to_f32(std::span(half).first(n), s);
    for (std::size_t d = 0; d < hd; ++d) {
      float acc = 0.0f;
      for (std::size_t t = 0; t < n; ++t) acc += s[t] * vf[t * kv_row + kvh * hd + d];
      out[h * hd + d] = acc;
    }
  }
  return out;
}

// Decode (1 row) at positions inside one chunk, on a chunk edge and over many chunks, with GQA groups and
// head sizes up to 256; and a prompt's 5 rows in one call (row r at pos + r: prefill).
TEST(WebGpuDevice, AttentionMatchesTheCpu) {
  TRUENO_REQUIRE_WEBGPU();
  std::mt19937_64 rng(seed() + 11);
  Job job("attention");
  struct Check {
    const Call* call;
    std::string what;
    std::vector<float> want;
  };
  std::vector<Check> checks;
  struct Shape {
    std::size_t heads, kv_heads, hd, n_ctx, rows;
  };
  for (const Shape sh : {Shape{8, 8, 8, 80, 1}, Shape{4, 2, 64, 300, 1}, Shape{6, 1, 128, 130, 1}, Shape{2, 2, 256, 70, 1}, Shape{4, 2, 64, 200, 5}}) {
    const std::size_t kv_row = sh.kv_heads * sh.hd, group = sh.heads / sh.kv_heads;
    std::vector<std::uint16_t> kc(sh.n_ctx * kv_row), vc(sh.n_ctx * kv_row);
    ops::f32_to_f16(random_vector(kc.size(), rng, 2.0f), kc);
    ops::f32_to_f16(random_vector(vc.size(), rng), vc);
    const auto q = random_vector(sh.rows * sh.heads * sh.hd, rng, 2.0f);
    const std::vector<std::size_t> positions = sh.rows > 1 ? std::vector<std::size_t>{0, 61, 130}
                                                           : std::vector<std::size_t>{0, 63, 64, sh.n_ctx - 1};
    for (const std::size_t pos : positions) {
      std::vector<float> want;
      for (std::size_t r = 0; r < sh.rows; ++r) {
        const auto row = cpu_attention(q.data() + r * sh.heads * sh.hd, kc, vc, sh.heads, sh.hd, group, kv_row, pos + r);
        want.insert(want.end(), row.begin(), row.end());
      }
      const std::size_t bound = std::min(sh.n_ctx, (pos + sh.rows - 1) / 64 * 64 + 128);  // a bucket above the position
      const std::string what = std::to_string(sh.heads) + "/" + std::to_string(sh.kv_heads) + " heads x " + std::to_string(sh.hd) + " pos " +
                               std::to_string(pos) + " rows " + std::to_string(sh.rows) + " of " + std::to_string(bound);
      const Call& c = job.call("attention").in("q", q).in("kc", kc).in("vc", vc).in("pos", std::vector<std::int32_t>{static_cast<std::int32_t>(pos)})
                          .zeros("att", q.size() * 4, 0x7fc00000u)  // NaN: every element must be written
                          .buf("q", "q").buf("kCache", "kc").buf("vCache", "vc").buf("pos", "pos").buf("att", "att").arg("group", group)
                          .arg("kvRow", kv_row).arg("positions", bound).arg("rows", sh.rows).scratch(sh.n_ctx, sh.heads, sh.hd, sh.rows).out("att");
      checks.push_back({&c, what, want});
    }
  }
  ASSERT_TRUE(job.run()) << "the harness failed (its log is above)";
  for (const Check& c : checks) expect_contract("attention_scores", Job::output(*c.call, "att"), c.want, c.what);
}

TEST(WebGpuDevice, ArgmaxMatchesTheCpu) {
  TRUENO_REQUIRE_WEBGPU();
  std::mt19937_64 rng(seed() + 5);
  Job job("argmax");
  std::vector<std::pair<const Call*, std::vector<float>>> checks;
  for (std::size_t n : {1u, 7u, 1000u, 32000u}) {
    const std::size_t count = 5;
    auto x = random_vector(count * n, rng);
    if (n > 7) {
      x[1 * n + 10] = x[1 * n + 700] = 100.0f;                               // row 1: a tie, the first wins
      x[2 * n + 5] = std::numeric_limits<float>::quiet_NaN();                // row 2: NaN wins
      x[2 * n + 3] = 1e30f;
      x[3 * n + n - 1] = std::numeric_limits<float>::infinity();            // row 3: the last element
      x[4 * n + 9] = x[4 * n + 2] = std::numeric_limits<float>::quiet_NaN();  // row 4: the first NaN
    }
    std::vector<float> want;
    for (std::size_t r = 0; r < count; ++r) want.push_back(static_cast<float>(ops::argmax(std::span(x).subspan(r * n, n))));
    checks.emplace_back(&job.call("argmax").in("x", x).zeros("o", count * 4).buf("x", "x").buf("out", "o").arg("n", n).arg("count", count).out("o"), want);
  }
  ASSERT_TRUE(job.run()) << "the harness failed (its log is above)";
  for (const auto& [call, want] : checks) {
    std::vector<float> got;
    for (std::uint32_t i : Job::output<std::uint32_t>(*call, "o")) got.push_back(static_cast<float>(i));
    expect_contract("argmax", got, want, std::to_string(want.size()) + " rows");
  }
}

// A contract violation in the glue is an error naming the op and the value, and the harness exits 1.
TEST(WebGpuDevice, UnsupportedWeightTypesAndOversizedBindingsAreNamed) {
  TRUENO_REQUIRE_WEBGPU();
  {
    Job job("bad_type");
    job.call("gemv").zeros("w", 1024).zeros("x", 1024).zeros("y", 64).text("type", "q2_k").buf("w", "w").buf("x", "x").buf("y", "y").arg("rows", 1)
        .arg("cols", 256);
    std::string log;
    EXPECT_FALSE(job.run(&log));
    EXPECT_NE(log.find("weight type 'q2_k' is not supported (supported: f32, f16, q4_0, q8_0, q4_k, q5_k, q6_k, bf16)"), std::string::npos) << log;
  }
  {
    Job job("too_big", 4096);  // activations are never split: x of 3 rows of 2 KiB over a 4 KiB limit is refused
    job.call("gemv").zeros("w", 4 * 2048).zeros("x", 3 * 2048).zeros("y", 64).text("type", "f32").buf("w", "w").buf("x", "x").buf("y", "y")
        .arg("rows", 4).arg("cols", 512).arg("m", 3);
    std::string log;
    EXPECT_FALSE(job.run(&log));
    EXPECT_NE(log.find("gemv x: a buffer of"), std::string::npos) << log;
    EXPECT_NE(log.find("over maxStorageBufferBindingSize"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace trueno::webgpu
