// The Vulkan backend: loading and reporting with or without a device, the pipeline cache, buffers, and
// every shader against its CPU kernel by the obligations of contracts/gpu/vulkan.yaml (VulkanGpu.*, label
// gpu; they run on lavapipe in CI and skip visibly where there is no Vulkan device).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "contract/contract_spec.h"
#include "trueno/device.h"
#include "trueno/ops.h"
#include "trueno/quant.h"
#include "trueno/vulkan/context.h"
#include "trueno/vulkan/ops.h"
#include "vulkan/shaders.h"
#include "vulkan/vulkan_test_support.h"

namespace trueno::vulkan {
namespace {

using namespace testing;

TEST(Vulkan, DeviceReportSaysWhatOrWhy) {
  if (std::getenv("TRUENO_FAKE_DEVICE") != nullptr) GTEST_SKIP() << "skipped: TRUENO_FAKE_DEVICE replaces the real report";
  std::string why;
  const int n = device_count(&why);
  std::vector<DeviceStatus> lines;
  for (const DeviceStatus& d : device_report())
    if (d.device.kind == DeviceKind::Vulkan) lines.push_back(d);
  if (n == 0) {
    std::printf("Vulkan unavailable here: %s\n", why.c_str());
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_FALSE(lines[0].available);
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(lines[0].detail, why);
    EXPECT_THROW(Context::open(0), BackendUnavailable);
    return;
  }
  ASSERT_EQ(static_cast<int>(lines.size()), n);
  for (int i = 0; i < n; ++i) {
    const auto info = probe(i);
    ASSERT_TRUE(info);
    std::printf("vulkan:%d: %s\n", i, lines[i].detail.c_str());
    EXPECT_TRUE(lines[i].available);
    EXPECT_TRUE(lines[i].detail.starts_with(info->describe())) << lines[i].detail;
    EXPECT_GT(info->subgroup_size, 0u);
    EXPECT_GT(info->max_storage_buffer_range, 0u);
    EXPECT_FALSE(info->heaps.empty());
    // A CPU implementation (lavapipe) is usable but never chosen automatically, and says so.
    EXPECT_EQ(lines[i].automatic, !info->cpu);
    EXPECT_EQ(lines[i].detail.find("cpu device: never chosen automatically") != std::string::npos, info->cpu) << lines[i].detail;
  }
  std::string past;
  EXPECT_FALSE(probe(n, &past));
  EXPECT_NE(past.find("no Vulkan device"), std::string::npos) << past;
  EXPECT_THROW(Context::open(n), BackendUnavailable);
}

TEST(Vulkan, VkResultsAreNamed) {
  EXPECT_EQ(result_name(VK_ERROR_OUT_OF_DEVICE_MEMORY), "VK_ERROR_OUT_OF_DEVICE_MEMORY");
  EXPECT_EQ(result_name(static_cast<VkResult>(-12345)), "VkResult -12345");
  try {
    check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit");
    FAIL();
  } catch (const VulkanError& e) {
    EXPECT_STREQ(e.what(), "vkQueueSubmit: VK_ERROR_DEVICE_LOST");
    EXPECT_EQ(e.code(), VK_ERROR_DEVICE_LOST);
  }
}

// Every embedded shader module (its source: a variant "x_subgroup" is shader "x", and a module built from
// a CUDA kernel through decy is the shader it stands in for) has an entry in
// contracts/gpu/vulkan.yaml, and every entry names an existing VulkanGpu test.
TEST(Vulkan, EveryShaderHasAContract) {
  const YAML::Node root = YAML::LoadFile(test::contracts_dir() + "/gpu/vulkan.yaml");
  std::set<std::string> covered;
  const ::testing::UnitTest& ut = *::testing::UnitTest::GetInstance();
  std::set<std::string> tests;
  for (int i = 0; i < ut.total_test_suite_count(); ++i)
    for (int j = 0; j < ut.GetTestSuite(i)->total_test_count(); ++j)
      tests.insert(std::string(ut.GetTestSuite(i)->name()) + "." + ut.GetTestSuite(i)->GetTestInfo(j)->name());
  for (const auto& kv : root["ops"]) {
    const std::string op = kv.first.as<std::string>();
    ASSERT_TRUE(kv.second["shader"]) << op << " names no shader";
    covered.insert(kv.second["shader"].as<std::string>());
    const std::string t = kv.second["test"].as<std::string>("");
    EXPECT_TRUE(tests.contains(t)) << "contracts/gpu/vulkan.yaml: " << op << " names test '" << t << "', which does not exist";
  }
  for (std::size_t i = 0; i < kEmbeddedShaderCount; ++i) {
    std::string name = kEmbeddedShaders[i].name;
    if (name.ends_with("_fault")) name.resize(name.size() - 6);  // test-only faulty builds
    if (name.ends_with("_subgroup")) name.resize(name.size() - 9);
    if (*kEmbeddedShaders[i].stands_for != '\0') name = kEmbeddedShaders[i].stands_for;  // built from a CUDA kernel
    EXPECT_TRUE(covered.contains(name)) << "shader " << kEmbeddedShaders[i].name << " has no contract in contracts/gpu/vulkan.yaml";
  }
}

TEST(Vulkan, CacheDirFollowsTheEnvironment) {
  const char* old = std::getenv("TRUENO_VULKAN_CACHE");
  const std::string saved = old ? old : "";
  setenv("TRUENO_VULKAN_CACHE", "off", 1);
  EXPECT_EQ(default_cache_dir(), "");
  setenv("TRUENO_VULKAN_CACHE", "/tmp/x", 1);
  EXPECT_EQ(default_cache_dir(), "/tmp/x");
  if (old) setenv("TRUENO_VULKAN_CACHE", saved.c_str(), 1); else unsetenv("TRUENO_VULKAN_CACHE");
}

// ---- on a device ----


TEST(VulkanGpu, GemvOfEveryWeightTypeMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 1);
  // Every weight type of the CPU's quant_matvec (all of kQuantTypes but the activation format Q8_K).
  std::vector<QuantType> types;
  for (QuantType t : kQuantTypes)
    if (t != QuantType::Q8_K) types.push_back(t);
  for (QuantType t : types) EXPECT_TRUE(gemv_supports(t)) << quant_info(t).name;
  EXPECT_FALSE(gemv_supports(QuantType::Q8_K));
  using Shapes = std::vector<std::pair<std::size_t, std::size_t>>;
  // Small (lavapipe runs them on the CPU). 1027 rows take the 4-rows-per-workgroup path with a last
  // workgroup of 3 rows; 512 columns are 2 k-quant blocks, 288 are 9 blocks of 32. Q4_0 (18-byte), Q8_0
  // (34) and Q6_K (210) blocks start 2 bytes past a word every other block, and 67 rows of 288 Q4_0/Q8_0
  // or 1027 rows of Q6_K end 2 bytes past one. The quantized checks start at 64 rows: the CPU rounds
  // activations to Q8_0/Q8_K and the GPU does not, an error relative to |w| |x|.
  const Shapes k_shapes = {{64, 256}, {67, 512}, {1027, 256}};
  const Shapes b32_shapes = {{64, 256}, {67, 288}, {1027, 256}};
  const Shapes float_shapes = {{64, 64}, {37, 334}, {1027, 64}};
  const bool both = c.info().subgroup_arithmetic;
  for (bool subgroup : {true, false}) {
    if (subgroup && !both) continue;
    c.set_subgroup_reductions(subgroup);
    for (QuantType type : types) {
      const std::size_t block = quant_info(type).block_elems;
      const std::string op = "gemv_" + std::string(quant_info(type).name);
      const Shapes& shapes = block == 1 ? float_shapes : block == 32 ? b32_shapes : k_shapes;
      for (std::size_t s = 0; s < shapes.size(); ++s) {
        const auto [rows, cols] = shapes[s];
        for (std::size_t m : {std::size_t{1}, std::size_t{3}}) {
          // Each (reduction, type, m, rows per workgroup) is a pipeline, and lavapipe compiles each with
          // LLVM: the fallback reduction is checked on fewer of them (CI time).
          if (!subgroup && both && (m == 1 || s == 1)) continue;
          const auto wf = random_vector(rows * cols, rng, 0.05f);
          const auto w = quantized(type, wf, rows, cols);
          const auto x = random_vector(m * cols, rng);
          // F16 weights multiply f16-rounded activations on both sides (realizar's CPU pass rounds them).
          std::vector<float> x_cpu = x;
          if (type == QuantType::F16) {
            std::vector<std::uint16_t> h(x.size());
            ops::f32_to_f16(x, h);
            ops::f16_to_f32(h, x_cpu);
          }
          std::vector<float> want(m * rows);
          for (std::size_t r = 0; r < m; ++r)
            quant_matvec(type, w, rows, cols, std::span(x_cpu).subspan(r * cols, cols), std::span(want).subspan(r * rows, rows));
          Buffer dw = to_device(w), dx = to_device(x), dy(c, m * rows * 4);
          Recorder rec(c);
          gemv(rec, type, dw, rows, cols, dx, m, dy);
          rec.submit();
          expect_contract(gemv_by_subgroup(c, type, cols) ? "gemv_rows_" + std::string(quant_info(type).name) : op, from_device(dy, m * rows), want,
                          std::to_string(rows) + "x" + std::to_string(cols) + " m=" + std::to_string(m) + (subgroup ? " subgroup" : " shared"));
        }
      }
    }
  }
  c.set_subgroup_reductions(both);
}

// A matrix whose size is not whole 32-bit words (3 rows of one block: 2 bytes past a word): the shader
// reads its last 2 bytes in a word that reaches past them, which Buffer keeps in range by rounding the
// VkBuffer up (a device may read a word past the range as 0; lavapipe does). x is zero but where the
// output depends on that last word, and the reference is the exact dot product of the dequantized row with
// the f32 x (what the shader computes, up to f32 rounding), so a word read as 0 fails the last row.
TEST(VulkanGpu, GemvReadsTheLastBytesOfAMatrixOfOddSize) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 7);
  struct Case {
    QuantType type;
    std::size_t cols;
    std::vector<std::size_t> live;  // the elements read from the last word; empty: all of them
  };
  const Case cases[] = {
      {QuantType::Q8_0, 32, {30, 31}},          // qs[30], qs[31]
      {QuantType::Q4_0, 32, {14, 15, 30, 31}},  // both nibbles of qs[14], qs[15]
      {QuantType::Q6_K, 256, {}},               // d, the block's last 2 bytes
  };
  const std::size_t rows = 3;
  for (const Case& k : cases) {
    const std::size_t rb = quant_row_bytes(k.type, k.cols);
    ASSERT_EQ(rows * rb % 4, 2u);
    const auto w = quantized(k.type, random_vector(rows * k.cols, rng, 0.05f), rows, k.cols);
    auto x = random_vector(k.cols, rng);
    if (!k.live.empty()) {
      std::vector<float> live(k.cols, 0.0f);
      for (std::size_t i : k.live) live[i] = x[i];
      x = live;
    }
    Buffer dw = to_device(w), dx = to_device(x), dy(c, rows * 4);
    Recorder rec(c);
    gemv(rec, k.type, dw, rows, k.cols, dx, 1, dy);
    rec.submit();
    const auto got = from_device(dy, rows);
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<double> wr(k.cols);
      dequantize_exact(QuantRow::view(k.type, std::span(w).subspan(r * rb, rb), k.cols), wr);
      double want = 0, mag = 0;
      for (std::size_t i = 0; i < k.cols; ++i) want += wr[i] * x[i], mag += std::abs(wr[i] * x[i]);
      EXPECT_NEAR(got[r], want, 1e-4 * mag) << quant_info(k.type).name << ", " << w.size() << " bytes, row " << r;
    }
  }
}

TEST(VulkanGpu, GemvAccumulatesAndChainsInOneSubmit) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 2);
  const std::size_t rows = 96, cols = 512;
  const auto w1 = quantized(QuantType::Q4_K, random_vector(rows * cols, rng, 0.05f), rows, cols);
  const auto w2 = quantized(QuantType::Q8_0, random_vector(rows * cols, rng, 0.05f), rows, cols);
  const auto x = random_vector(cols, rng);
  std::vector<float> a(rows), b(rows), want(rows);
  quant_matvec(QuantType::Q4_K, w1, rows, cols, x, a);
  quant_matvec(QuantType::Q8_0, w2, rows, cols, x, b);
  ops::add(a, b, want);
  Buffer d1 = to_device(w1), d2 = to_device(w2), dx = to_device(x), dy(c, rows * 4);
  Recorder rec(c);
  gemv(rec, QuantType::Q4_K, d1, rows, cols, dx, 1, dy);
  gemv(rec, QuantType::Q8_0, d2, rows, cols, dx, 1, dy, /*accumulate=*/true);  // reads the first dispatch's y
  EXPECT_EQ(rec.recorded(), 2u);
  rec.submit();
  expect_contract("gemv_q8_0", from_device(dy, rows), want, "q4_k then q8_0 accumulated");
}

TEST(VulkanGpu, ElementwiseLayerOpsMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 3);
  const bool both = c.info().subgroup_arithmetic;
  for (std::size_t n : {64u, 172u, 4096u}) {
    const auto x = random_vector(n, rng), y = random_vector(n, rng), w = random_vector(n, rng);
    for (bool subgroup : {true, false}) {  // rmsnorm, 3 rows
      if (subgroup && !both) continue;
      c.set_subgroup_reductions(subgroup);
      std::vector<float> x3 = random_vector(3 * n, rng), want(3 * n);
      for (int r = 0; r < 3; ++r) ops::rmsnorm(std::span(x3).subspan(r * n, n), w, 1e-5f, std::span(want).subspan(r * n, n));
      Buffer dx = to_device(x3), dw = to_device(w), out(c, 3 * n * 4);
      Recorder rec(c);
      rmsnorm(rec, dx, dw, 1e-5f, out, 3, n);
      rec.submit();
      expect_contract("rmsnorm", from_device(out, 3 * n), want, std::to_string(n) + (subgroup ? " subgroup" : " shared"));
    }
    c.set_subgroup_reductions(both);
    for (bool decy : {true, false}) {  // the shaders built from the CUDA kernels, then the hand-written ones
      c.set_decy_shaders(decy);
      {
        std::vector<float> want(n);
        ops::swiglu(x, y, want);
        Buffer dg = to_device(x), du = to_device(y);
        Recorder rec(c);
        swiglu(rec, dg, du, n);
        rec.submit();
        expect_contract("swiglu", from_device(dg, n), want, std::to_string(n) + " " + swiglu_module(c, n));
      }
      {
        std::vector<float> want(n);
        ops::add(x, y, want);
        Buffer dx = to_device(x), dy = to_device(y);
        Recorder rec(c);
        add_inplace(rec, dx, dy, n);
        rec.submit();
        expect_contract("add", from_device(dx, n), want, std::to_string(n) + " " + add_inplace_module(c, n));
      }
    }
    c.set_decy_shaders(true);
  }
}

TEST(VulkanGpu, RopeAndKvAppendMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 4);
  struct Shape { int heads, hd, rope_dim; bool neox, freqs; };
  for (Shape sh : {Shape{8, 8, 8, false, false}, Shape{4, 128, 128, false, true}, Shape{14, 64, 64, true, false}, Shape{4, 64, 32, false, false},
                   Shape{2, 64, 32, true, true}}) {
    for (int pos : {0, 1, 17, 4095}) {
      const std::size_t n = static_cast<std::size_t>(sh.heads) * sh.hd;
      const auto v = random_vector(n, rng);
      std::vector<float> freqs(sh.rope_dim / 2);
      for (std::size_t i = 0; i < freqs.size(); ++i) freqs[i] = 1.0f + static_cast<float>(i % 7);
      const float base = 500000.0f, ts = std::pow(base, -2.0f / static_cast<float>(sh.rope_dim));
      std::vector<float> want = v;  // the CPU's formula (realizar Session::rope)
      float theta = static_cast<float>(pos);
      for (int i = 0; i < sh.rope_dim / 2; ++i, theta *= ts) {
        const float t = sh.freqs ? theta / freqs[i] : theta, cs = std::cos(t), sn = std::sin(t);
        for (int h = 0; h < sh.heads; ++h) {
          float* p = want.data() + h * sh.hd;
          const int a = sh.neox ? i : 2 * i, b = sh.neox ? i + sh.rope_dim / 2 : 2 * i + 1;
          const float x0 = p[a], x1 = p[b];
          p[a] = x0 * cs - x1 * sn, p[b] = x0 * sn + x1 * cs;
        }
      }
      Buffer dv = to_device(v), df = to_device(freqs), dpos = to_device(&pos, sizeof pos);
      Recorder rec(c);
      rope(rec, dv, sh.heads, dpos, RopeParams{sh.hd, sh.rope_dim, ts, sh.freqs ? &df : nullptr, sh.neox});
      rec.submit();
      expect_contract("rope", from_device(dv, n), want,
                      std::to_string(sh.heads) + "x" + std::to_string(sh.hd) + (sh.neox ? " neox" : "") + (sh.freqs ? " freqs" : "") + " pos " + std::to_string(pos));
    }
  }
  // kv_append: f16 into slot pos, neighbours untouched; values across the f16 range (normal, subnormal,
  // overflowing, ties) round to nearest even like the CPU's conversion. Through the module built from the
  // CUDA kernel, then the hand-written one; 1002 values end in a part of a workgroup.
  for (bool decy : {true, false}) {
    c.set_decy_shaders(decy);
    for (int n : {256, 1002}) {
      const int slots = 4, pos = 2;
      auto k = random_vector(n, rng), v = random_vector(n, rng, 1000.0f);
      const float specials[] = {0.0f, -0.0f, 1e-6f, -3e-7f, 6.1e-5f, 65504.0f, 65520.0f, 1e6f, -1e6f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 2.98e-8f};
      for (std::size_t i = 0; i < std::size(specials); ++i) k[i] = specials[i];
      Buffer dk = to_device(k), dv = to_device(v), kc(c, slots * n * 2), vc(c, slots * n * 2), dpos = to_device(&pos, sizeof pos);
      Recorder rec(c);
      rec.fill(kc, 0);
      rec.fill(vc, 0);
      kv_append(rec, dk, dv, kc, vc, dpos, n);
      rec.submit();
      const auto gk = from_device<std::uint16_t>(kc, slots * n), gv = from_device<std::uint16_t>(vc, slots * n);
      std::vector<std::uint16_t> wk(n), wv(n);
      ops::f32_to_f16(k, wk);
      ops::f32_to_f16(v, wv);
      std::vector<float> got, want;
      for (int i = 0; i < slots * n; ++i) {
        const bool in = i / n == pos;
        got.push_back(static_cast<float>(gk[i])), got.push_back(static_cast<float>(gv[i]));
        want.push_back(in ? static_cast<float>(wk[i % n]) : 0.0f), want.push_back(in ? static_cast<float>(wv[i % n]) : 0.0f);
      }
      expect_contract("kv_append", got, want, "f16 bits, 4 slots of " + std::to_string(n) + " " + kv_append_module(c, n, 1));
    }
  }
  c.set_decy_shaders(true);
}

TEST(VulkanGpu, ArgmaxMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 5);
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
    std::vector<float> want, got;
    for (std::size_t r = 0; r < count; ++r) want.push_back(static_cast<float>(ops::argmax(std::span(x).subspan(r * n, n))));
    Buffer dx = to_device(x), out(c, count * 4);
    Recorder rec(c);
    argmax(rec, dx, count, n, out);
    rec.submit();
    for (std::uint32_t i : from_device<std::uint32_t>(out, count)) got.push_back(static_cast<float>(i));
    expect_contract("argmax", got, want, std::to_string(count) + "x" + std::to_string(n));
  }
}

// Note [Vulkan pipeline cache]: written, reused by the next context, a corrupt or truncated entry
// rejected by name and rewritten.
TEST(VulkanGpu, PipelineCacheIsReusedAndCorruptEntriesAreRebuilt) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("trueno-vkcache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const char* old = std::getenv("TRUENO_VULKAN_CACHE");
  const std::string saved = old ? old : "";
  setenv("TRUENO_VULKAN_CACHE", dir.c_str(), 1);
  const std::uint32_t spec[] = {64};
  std::string path;
  {
    auto c = Context::open(test_device());
    EXPECT_FALSE(c->cache_loaded());
    path = c->cache_path();
    EXPECT_TRUE(path.starts_with(dir.string())) << path;
    c->pipeline("add", 2, 4, spec);
  }  // written on destruction
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  {
    auto c = Context::open(test_device());
    EXPECT_TRUE(c->cache_loaded()) << c->cache_rejected();
  }
  const auto size = std::filesystem::file_size(path);
  auto damage = [&](auto&& how, const char* reason) {
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      how(f);
    }
    {
      auto c = Context::open(test_device());
      EXPECT_FALSE(c->cache_loaded());
      EXPECT_NE(c->cache_rejected().find(reason), std::string::npos) << c->cache_rejected();
      Recorder rec(*c);  // still works: pipelines are built from scratch
      std::vector<float> a = {1, 2}, b = {3, 4};
      Buffer da = to_device(a, *c), db = to_device(b, *c);
      add_inplace(rec, da, db, 2);
      rec.submit();
      EXPECT_EQ(from_device(da, 2), (std::vector<float>{4, 6}));
    }
    auto c = Context::open(test_device());  // the previous context rewrote the entry
    EXPECT_TRUE(c->cache_loaded()) << c->cache_rejected();
  };
  damage([&](std::fstream& f) { f.seekp(static_cast<std::streamoff>(size) - 3); f.put('\x5a'); f.put('\xa5'); }, "payload hash mismatch");
  damage([&](std::fstream&) { std::filesystem::resize_file(path, size / 2); }, "payload of");
  damage([&](std::fstream& f) { f.seekp(0); f.write("garbage!", 8); }, "bad magic");
  std::filesystem::remove_all(dir);
  if (old) setenv("TRUENO_VULKAN_CACHE", saved.c_str(), 1); else unsetenv("TRUENO_VULKAN_CACHE");
}

// Device-local buffers with staging transfers (the discrete-GPU path, forced with TRUENO_VULKAN_STAGING=1)
// hold the same bytes and feed the same shaders.
TEST(VulkanGpu, StagingBuffersRoundTrip) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  setenv("TRUENO_VULKAN_STAGING", "1", 1);
  auto c = Context::open(test_device());
  unsetenv("TRUENO_VULKAN_STAGING");
  EXPECT_FALSE(c->prefer_mapped());
  std::mt19937_64 rng(test_seed() + 6);
  const std::size_t rows = 64, cols = 256;
  const auto w = quantized(QuantType::Q4_K, random_vector(rows * cols, rng, 0.05f), rows, cols);
  const auto x = random_vector(cols, rng);
  Buffer dw = to_device(w, *c), dx = to_device(x, *c), dy(*c, rows * 4);
  EXPECT_FALSE(dw.host_visible());
  std::vector<std::byte> back(w.size());
  dw.download(back.data(), back.size());
  EXPECT_EQ(back, w);
  std::vector<float> part = {0.7f, -0.8f};
  dx.upload(part.data(), 8, 4 * 10);  // at an offset
  std::vector<float> x2 = x;
  x2[10] = 0.7f, x2[11] = -0.8f;
  std::vector<float> want(rows);
  quant_matvec(QuantType::Q4_K, w, rows, cols, x2, want);
  Recorder rec(*c);
  gemv(rec, QuantType::Q4_K, dw, rows, cols, dx, 1, dy);
  rec.submit();
  expect_contract("gemv_q4_k", from_device(dy, rows), want, "staging buffers");
}

// Note [Vulkan transfers]: copies larger than the context's staging chunk go in chunks, at any offset, in
// both directions, and the staging buffer serves every buffer of the context.
TEST(VulkanGpu, StagedCopiesLargerThanOneChunk) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  setenv("TRUENO_VULKAN_STAGING", "1", 1);
  auto c = Context::open(test_device());
  unsetenv("TRUENO_VULKAN_STAGING");
  const std::size_t bytes = Context::kTransferChunk + 4100, offset = 12;  // two chunks (lavapipe binds 128 MiB at most)
  std::vector<std::uint8_t> src(bytes);
  std::mt19937_64 rng(test_seed() + 7);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  Buffer big(*c, bytes + offset), small(*c, 64);
  EXPECT_FALSE(big.host_visible());
  big.upload(src.data(), bytes, offset);
  const std::uint8_t tail[5] = {1, 2, 3, 4, 5};
  small.upload(tail, 5, 3);  // another buffer through the same staging
  std::vector<std::uint8_t> back(bytes), back_small(5);
  big.download(back.data(), bytes, offset);
  small.download(back_small.data(), 5, 3);
  EXPECT_TRUE(back == src) << "the chunked round trip differs";
  EXPECT_EQ(back_small, std::vector<std::uint8_t>(tail, tail + 5));
}

TEST(VulkanGpu, ShapeErrorsAreNamed) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  try {
    Buffer b(c, c.info().max_storage_buffer_range + 1);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferRange"), std::string::npos) << e.what();
  }
  Buffer w(c, 1024), x(c, 1024), y(c, 1024);
  Recorder rec(c);
  for (QuantType t : {QuantType::Q8_K, static_cast<QuantType>(10)}) {  // an activation format; Q2_K, unknown to trueno
    try {
      gemv(rec, t, w, 1, 256, x, 1, y);
      ADD_FAILURE() << "gemv of type id " << static_cast<std::uint32_t>(t) << " did not throw";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(t == QuantType::Q8_K ? "weight type q8_k is not supported" : "weight type id 10 is not supported"),
                std::string::npos) << what;
      EXPECT_NE(what.find("(supported: f32, f16, bf16, q4_0, q8_0, q4_k, q5_k, q6_k)"), std::string::npos) << what;
    }
  }
  EXPECT_THROW(gemv(rec, QuantType::Q8_0, w, 64, 256, x, 1, y), ShapeError);      // W too small
  EXPECT_THROW(gemv(rec, QuantType::Q4_K, w, 1, 100, x, 1, y), ShapeError);       // not whole blocks
  EXPECT_THROW(gemv(rec, QuantType::F32, w, 1, 64, x, kMaxGemvRows + 1, y), ShapeError);
  EXPECT_THROW(kv_append(rec, x, x, y, y, x, 3), ShapeError);                    // odd n
  EXPECT_EQ(rec.recorded(), 0u);
}

}  // namespace
}  // namespace trueno::vulkan

namespace trueno::vulkan {
namespace {

// Context::pipeline_from_spirv (decy's kernels, docs/DECY.md): the embedded `add` module given as plain
// words runs like the embedded pipeline; the same words give the same pipeline, another push size another
// one (which takes that size); non-SPIR-V is refused.
TEST(VulkanGpu, PipelineFromGivenSpirvRuns) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = testing::test_context();
  const EmbeddedShader* add = find_shader("add");
  ASSERT_NE(add, nullptr);
  const std::vector<std::uint32_t> words(add->words, add->words + add->word_count);
  const std::uint32_t spec[1] = {64};
  const Pipeline& p = c.pipeline_from_spirv("add_copy", words, 2, 8, spec);
  EXPECT_EQ(&p, &c.pipeline_from_spirv("add_copy", words, 2, 8, spec));
  const Pipeline& wider = c.pipeline_from_spirv("add_copy", words, 2, 16, spec);
  EXPECT_NE(&p, &wider);
  EXPECT_EQ(wider.push_bytes, 16u);
  const std::uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_THROW(c.pipeline_from_spirv("junk", junk, 1, 0), InvalidArgument);
  const std::size_t n = 200;
  std::vector<float> y(n), x(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(i), x[i] = 0.5f;
  Buffer by = testing::to_device(y, c), bx = testing::to_device(x, c);
  Recorder r(c);
  const std::uint32_t push[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n)};
  r.dispatch(p, {&by, &bx}, push, static_cast<std::uint32_t>((n + 63) / 64));
  const std::uint32_t push16[4] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n), 0, 0};
  r.dispatch(wider, {&by, &bx}, push16, static_cast<std::uint32_t>((n + 63) / 64));
  r.submit();
  const auto out = testing::from_device(by, n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(i) + 1.0f) << i;
}

}  // namespace
}  // namespace trueno::vulkan
