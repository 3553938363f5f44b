// The CUDA layer: loading and reporting without a GPU, NVRTC compilation and the cubin cache (where
// NVRTC is installed), and every CUDA kernel against its CPU kernel by the obligations of
// contracts/gpu/cuda.yaml (CudaGpu.*, label gpu: a visible skip on machines without a CUDA device).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <random>
#include <set>
#include <tuple>

#include "contract/contract_spec.h"
#include "cuda/cuda_test_support.h"
#include "trueno/cuda/context.h"
#include "trueno/device.h"
#include "cuda/kernels.h"
#include "cuda/nvrtc.h"
#include "trueno/cuda/ops/batch.h"
#include "trueno/cuda/ops/convert.h"
#include "trueno/cuda/ops/gemm.h"
#include "trueno/cuda/ops/gemv.h"
#include "trueno/cuda/ops/layer.h"
#include "quant/blocks.h"
#include "trueno/backend.h"
#include "trueno/ops.h"
#include "trueno/quant.h"

namespace trueno::cuda {
namespace {

using namespace testing;


TEST(Cuda, DeviceReportSaysWhyWhenUnavailable) {
  if (std::getenv("TRUENO_FAKE_DEVICE") != nullptr) GTEST_SKIP() << "skipped: TRUENO_FAKE_DEVICE replaces the real report";
  std::string why;
  const auto dev = probe(0, &why);
  DeviceStatus s;
  for (const DeviceStatus& d : device_report())
    if (d.device == Device{DeviceKind::CUDA, 0}) s = d;
  EXPECT_EQ(s.device.kind, DeviceKind::CUDA);
  if (dev) {
    std::printf("CUDA: %s\n", s.detail.c_str());
    EXPECT_TRUE(s.detail.starts_with(dev->describe())) << s.detail;
    EXPECT_NE(s.detail.find("kernels: "), std::string::npos) << s.detail;
    EXPECT_EQ(static_cast<int>(available_devices().size()) >= device_count(), true);
    // An index past the last device is refused by name.
    EXPECT_THROW(Context::open(device_count()), BackendUnavailable);
  } else {
    EXPECT_FALSE(s.available);
    std::printf("CUDA unavailable here: %s\n", why.c_str());
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(s.detail, why);
    EXPECT_THROW(Context::open(0), BackendUnavailable);
  }
}

// Context::function's cache is looked up by the name pointers first: a buffer holding one kernel's name,
// then another's, must find each its own kernel (it once returned the first for both).
TEST(CudaGpu, KernelNamesInAReusedBufferFindTheirOwnKernels) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  const auto c = Context::open(0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s", "dequant_q4_k_f16");
  const api::CUfunction a = c->function("dequant_f16", buf);
  std::snprintf(buf, sizeof buf, "%s", "dequant_q8_0_f16");
  const api::CUfunction b = c->function("dequant_f16", buf);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, c->function("dequant_f16", "dequant_q4_k_f16"));
  EXPECT_EQ(b, c->function("dequant_f16", "dequant_q8_0_f16"));
  std::snprintf(buf, sizeof buf, "%s", "dequant_q4_k_f16");
  EXPECT_EQ(a, c->function("dequant_f16", buf));
}

TEST(CudaGpu, TwoContextsOnOneDeviceAreIndependent) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  // Each context loads its own modules and handles: a kernel run through a second context (then closed)
  // leaves the first one's handles valid.
  const std::vector<float> x(256, 1.5f);
  for (int round = 0; round < 2; ++round) {
    const std::shared_ptr<Context> other = Context::open(0);
    DeviceBuffer dx(*other, x.size() * 4);
    dx.upload(x.data(), x.size() * 4);
    Q8Activations q(*other, x.size());
    quantize_q8_k(*other, dx.ptr(), q);
    other->synchronize();
  }
  DeviceBuffer dx = to_device(x);
  Q8Activations q(test_context(), x.size());
  quantize_q8_k(test_context(), dx.ptr(), q);
  test_context().synchronize();
  std::vector<float> d(1);
  q.d.download(d.data(), 4);
  EXPECT_NEAR(std::fabs(d[0]), 1.5f / 127.0f, 1e-6f);
}

// The names of the extern "C" kernels a module defines.
std::vector<std::string> kernel_names(std::string_view src) {
  std::vector<std::string> names;
  const std::string_view key = "extern \"C\" __global__";
  const auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (std::size_t at = src.find(key); at != std::string_view::npos; at = src.find(key, at + 1)) {
    std::size_t p = src.find("void", at) + 4;
    const auto skip_space = [&] { while (p < src.size() && std::isspace(static_cast<unsigned char>(src[p]))) ++p; };
    skip_space();
    if (src.substr(p).starts_with("__launch_bounds__")) p = src.find(')', p) + 1, skip_space();
    std::size_t e = p;
    while (e < src.size() && ident(src[e])) ++e;
    names.emplace_back(src.substr(p, e - p));
  }
  return names;
}

TEST(Cuda, EveryKernelHasAContract) {
  std::size_t n = 0;
  for (const KernelSource& k : kernel_sources()) {
    if (is_header(k)) continue;
    for (const std::string& name : kernel_names(k.source)) {
      if (name.starts_with("bench_")) continue;
      EXPECT_TRUE(gpu_contract(name)) << k.file << ": " << name;
      ++n;
    }
  }
  EXPECT_GE(n, 12u);
}

// The modules whose launchers use launch_overlapped (ops/gemv.cpp, ops/layer.cpp): each of their
// kernels must begin with overlap_prologue() (Note [Overlapped launches]), or it could read its input
// before the previous kernel has written it. Only the quantized GEMVs, whose weights no kernel writes, may
// begin with overlap_launch() and wait after their first weight loads (Note [Weights before the wait]), and
// rmsnorm_quantize, which loads its norm weight (w) alone before overlap_wait(), and attention_split_q8, which
// asks for its ring's first tiles of settled rows first (Note [The copy's rows before the wait]).
TEST(Cuda, OverlappedKernelsWaitForThePreviousKernelFirst) {
  const std::set<std::string> overlapped = {"gemv_k45", "gemv_q6_k", "gemv_q8_0", "gemv_float", "quantize_q8_k", "layer_ops", "fused_ops",
                                             "attention_split", "gemv_mixed"};
  const std::set<std::string> weights_first = {"gemv_k45", "gemv_q6_k", "gemv_q8_0", "gemv_mixed"};
  std::size_t checked = 0, early = 0;
  for (const KernelSource& k : kernel_sources()) {
    if (!overlapped.contains(k.module)) continue;
    const std::string_view src = k.source;
    for (std::size_t at = src.find("extern \"C\" __global__"); at != std::string_view::npos;
         at = src.find("extern \"C\" __global__", at + 1)) {
      const std::size_t body = src.find('{', at);
      std::size_t first = body + 1;
      while (first < src.size() && std::isspace(static_cast<unsigned char>(src[first]))) ++first;
      const std::string_view head = src.substr(at, body - at);
      if (head.find(" bench_") != std::string_view::npos) continue;  // a benchmark's kernel, launched alone
      if (head.find(" rmsnorm_quantize(") != std::string_view::npos) {
        const std::size_t wait = src.find("overlap_wait();", first);
        ASSERT_NE(wait, std::string_view::npos) << k.file;
        const std::string_view before = src.substr(first, wait - first);
        EXPECT_TRUE(before.starts_with("overlap_launch();")) << before;
        EXPECT_EQ(before.find("x["), std::string_view::npos) << "rmsnorm_quantize reads x before the wait: " << before;
        EXPECT_EQ(before.find("block_sum"), std::string_view::npos) << before;
        ++early;
      } else if (head.find(" attention_split_q8(") != std::string_view::npos && src.substr(first).starts_with("overlap_launch();")) {
        // Note [The copy's rows before the wait]: *pos and the ring's first tiles before the wait, unless
        // they hold the step's row; the body waits in one of two places
        EXPECT_NE(src.find("if (!early) overlap_wait();"), std::string_view::npos) << k.file;
        EXPECT_NE(src.find("if (early) overlap_wait();"), std::string_view::npos) << k.file;
        EXPECT_NE(src.find("tiles > kSplitStages - 1"), std::string_view::npos) << "the early fill must exclude the step's row: " << k.file;
        ++early;
      } else if (weights_first.contains(k.module) && src.substr(first).starts_with("overlap_launch();")) {
        // the wait is in the shared body (the module's own text or the body headers it includes): once before
        // and once after the first weight loads (gemv_wait, or gemv_k45's wait hook, whose default calls it)
        std::string text(src);
        for (const KernelSource& h : kernel_sources())
          if (is_header(h) && text.find(std::string("#include \"") + h.file + "\"") != std::string::npos) text += h.source;
        EXPECT_NE(text.find("wait(false);"), std::string::npos) << k.file;
        EXPECT_NE(text.find("wait(true);"), std::string::npos) << k.file;
        ++early;
      } else {
        EXPECT_TRUE(src.substr(first).starts_with("overlap_prologue();")) << k.file << ": " << head;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 37u);  // every decode kernel
  EXPECT_EQ(early, 12u);    // q4_k, q5_k (and their stream kernels), q6_k, q6_k split, q8_0, q8_0 split, q4_0, q4_k + q6_k split; rmsnorm_quantize; attention_split_q8
}

// Note [Split over the 8-bit copy]: the split kernel's block shapes, which the launcher and the kernel
// both rely on (no GPU needed): whole KV heads with their group of q heads, at most 16 warps, tiles of
// whole runs of every way, a ring within the 227 KB of shared memory an H100/H200 block may take.
TEST(Cuda, AttentionSplitShapesFitTheKernel) {
  std::size_t checked = 0;
  for (int hd : {64, 128})
    for (int n_kv : {1, 2, 3, 4, 8, 32, 40})
      for (int group : {1, 2, 3, 4, 7, 8, 16, 17, 32}) {
        const AttentionSplitShape s = attention_split_shape(n_kv, group, hd);
        const std::string what = std::to_string(n_kv) + " KV heads x " + std::to_string(group) + ", hd " + std::to_string(hd);
        if (group > 16) {
          EXPECT_EQ(s.heads, 0) << what << ": more than 16 q heads a KV head do not fit a block";
          continue;
        }
        ASSERT_GE(s.heads, 1) << what;
        EXPECT_EQ(n_kv % s.heads, 0) << what;
        ASSERT_GE(s.ways, 1) << what;
        EXPECT_EQ(s.threads, 32 * s.heads * group * s.ways) << what;
        EXPECT_LE(s.threads, 512) << what << " (__launch_bounds__(512))";
        EXPECT_GE(s.threads / 32, group) << what;
        const int run = 4 * 32 / (hd / 16);
        EXPECT_EQ(s.rows % (s.ways * run), 0) << what << ": " << s.rows << " rows";
        EXPECT_GE(s.shared_bytes, 2u * s.rows * s.heads * hd) << what;
        EXPECT_LE(s.shared_bytes, 232448u) << what;
        ++checked;
      }
  EXPECT_EQ(checked, 2u * 7 * 7);
  EXPECT_EQ(attention_split_shape(8, 1, 80).heads, 0) << "head size 80";
  if (const char* d = std::getenv("TRUENO_CUDA_DEFINES"); d == nullptr || *d == 0) {  // the defaults: a 7B's 32 heads in blocks of 4, one warp each, 16-position tiles
    const AttentionSplitShape s = attention_split_shape(32, 1, 128);
    EXPECT_EQ(std::make_tuple(s.heads, s.ways, s.rows, s.threads), std::make_tuple(4, 1, 16, 128));
    const AttentionSplitShape g = attention_split_shape(4, 8, 64);  // a 1.1B's: one KV head and its 8 q heads
    EXPECT_EQ(std::make_tuple(g.heads, g.ways, g.rows, g.threads), std::make_tuple(1, 1, 128, 256));
  }
}

TEST(Cuda, EveryModuleCompilesWithNvrtc) {
  std::string why;
  if (nvrtc(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  for (int arch : {80, 90}) {
    for (const KernelSource& k : kernel_sources()) {
      if (is_header(k)) continue;
      const Cubin c = compile_cubin(k.module, k.source, arch, 0, "");
      ASSERT_GT(c.image.size(), 4u) << k.module;
      EXPECT_EQ(std::string(c.image.data(), 4), "\x7f" "ELF") << k.module << " for sm_" << arch;
    }
  }
}

TEST(Cuda, KernelPathNeedsAmpereAndNvrtcFromComputeCapability12) {
  std::string why;
  EXPECT_EQ(choose_kernel_path(9, true, false, &why), KernelPath::Nvrtc);
  EXPECT_EQ(choose_kernel_path(12, true, true, &why), KernelPath::Nvrtc);
  EXPECT_EQ(choose_kernel_path(9, false, true, &why), KernelPath::DriverJitPtx);
  EXPECT_EQ(choose_kernel_path(12, false, true, &why), KernelPath::None);
  EXPECT_NE(why.find("NVRTC is required on compute capability 12"), std::string::npos) << why;
  EXPECT_EQ(choose_kernel_path(8, false, false, &why), KernelPath::None);
  EXPECT_NE(why.find("no PTX"), std::string::npos) << why;
  for (bool nvrtc : {true, false}) {
    why.clear();
    EXPECT_EQ(choose_kernel_path(7, nvrtc, true, &why), KernelPath::None);
    EXPECT_NE(why.find("compute capability 7.x is too old"), std::string::npos) << why;
    EXPECT_NE(why.find("8.0 or newer"), std::string::npos) << why;
  }
  EXPECT_EQ(choose_kernel_path(8, false, true, &why), KernelPath::DriverJitPtx);
}

TEST(Cuda, EveryModuleCarriesPtxWhenBuiltWithNvcc) {
#if !TRUENO_BUILT_WITH_NVCC
  GTEST_SKIP() << "skipped: built without nvcc (no PTX fallback embedded)";
#else
  for (const KernelSource& k : kernel_sources()) {
    if (is_header(k)) continue;
    ASSERT_NE(k.ptx, nullptr) << k.module;
    EXPECT_NE(std::string_view(k.ptx).find(".target sm_80"), std::string_view::npos) << k.module;
    for (const std::string& name : kernel_names(k.source))
      EXPECT_NE(std::string_view(k.ptx).find(".entry " + name), std::string_view::npos) << k.module << ": " << name;
  }
#endif
}

TEST(Cuda, CublasLoadsWhereInstalled) {
  std::string why;
  const Cublas* b = cublas(&why);
  if (b == nullptr) GTEST_SKIP() << "skipped: " << why;
  std::printf("cuBLAS %d.%d.%d from %s\n", b->major, b->minor, b->patch, b->library.c_str());
  EXPECT_GE(b->major, 11);
  try {
    check_cublas(7, "cublasGemmEx(test)");  // CUBLAS_STATUS_INVALID_VALUE
    ADD_FAILURE();
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cublasGemmEx(test): CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << e.what();
  }
}

TEST(Cuda, NvrtcErrorsCarryTheCompilerLog) {
  std::string why;
  if (nvrtc(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  try {
    compile_cubin("broken", "extern \"C\" __global__ void k() { undeclared_thing(); }", 90, 0, "");
    ADD_FAILURE() << "no error";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.cu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("undeclared_thing"), std::string::npos) << e.what();
  }
}

TEST(Cuda, CubinCacheHitsAndRebuildsCorruptEntries) {
  std::string why;
  if (nvrtc(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  const auto dir = std::filesystem::temp_directory_path() / ("trueno_cubin_test_" + std::to_string(test_seed()));
  std::filesystem::remove_all(dir);
  const KernelSource& k = kernel_source("gemv_k45");
  const Cubin first = compile_cubin(k.module, k.source, 90, 13000, dir.string());
  EXPECT_FALSE(first.from_cache);
  ASSERT_TRUE(std::filesystem::exists(first.path));
  const Cubin again = compile_cubin(k.module, k.source, 90, 13000, dir.string());
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.image, first.image);
  EXPECT_NE(compile_cubin(k.module, k.source, 90, 13010, dir.string()).path, first.path) << "driver version is in the key";
  // A flipped payload byte, then a truncated file: both detected and rebuilt.
  {
    std::fstream f(first.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  const Cubin flipped = compile_cubin(k.module, k.source, 90, 13000, dir.string());
  EXPECT_FALSE(flipped.from_cache);
  EXPECT_EQ(flipped.image, first.image);
  std::filesystem::resize_file(first.path, 50);
  EXPECT_FALSE(compile_cubin(k.module, k.source, 90, 13000, dir.string()).from_cache);
  EXPECT_TRUE(compile_cubin(k.module, k.source, 90, 13000, dir.string()).from_cache);
  std::filesystem::remove_all(dir);
}


// Q8_K blocks of the device buffers equal the CPU quantizer's of `values` (the GPU's own f32 output).
void expect_q8_of(const std::vector<float>& values, Q8Activations& q, const std::string& what) {
  const std::size_t n = values.size();
  std::vector<std::byte> cpu(quant_row_bytes(QuantType::Q8_K, n));
  quantize(QuantType::Q8_K, values, cpu);
  test_context().synchronize();
  std::vector<std::int8_t> gq(n);
  std::vector<float> gd(n / 256);
  std::vector<std::int16_t> gbs(n / 16);
  q.q.download(gq.data(), n);
  q.d.download(gd.data(), gd.size() * 4);
  q.bsums.download(gbs.data(), gbs.size() * 2);
  std::size_t mismatches = 0;
  for (std::size_t b = 0; b < n / 256; ++b) {
    quant::BlockQ8_K blk;
    std::memcpy(&blk, cpu.data() + b * sizeof blk, sizeof blk);
    mismatches += std::memcmp(&blk.d, &gd[b], 4) != 0;
    for (int i = 0; i < 256; ++i) mismatches += blk.qs[i] != gq[b * 256 + i];
    for (int g = 0; g < 16; ++g) mismatches += blk.bsums[g] != gbs[b * 16 + g];
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

TEST(CudaGpu, QuantizeQ8KEqualsTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed());
  for (std::size_t n : {256u, 4096u, 14336u}) {
    auto x = random_vector(n, rng);
    x[7] = 0.0f;
    x[9] = 5.0f, x[200] = -5.0f;  // a tie in magnitude with opposite signs: the first wins
    DeviceBuffer dx(test_context(), n * 4);
    dx.upload(x.data(), n * 4);
    Q8Activations q(test_context(), n);
    quantize_q8_k(c, dx.ptr(), q);
    expect_q8_of(x, q, "n = " + std::to_string(n));
  }
  gpu_contract("quantize_q8_k");
}


TEST(CudaGpu, GemvOfEveryWeightTypeMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 1);
  using Shapes = std::vector<std::pair<std::size_t, std::size_t>>;
  // 768, 1280: 3 and 5 steps of 256; 24576: more block steps than a Q6_K warp loads before the wait (Note
  // [Weights before the wait])
  const Shapes shapes = {{1, 256}, {7, 512}, {65, 768}, {130, 1280}, {64, 4096}, {1000, 4096}, {333, 14336}, {64, 24576}};
  const Shapes float_shapes = {{1, 64}, {64, 172}, {37, 333}, {512, 4096}};
  for (QuantType type : kWeightTypes) {
    const bool quantized = gemv_takes_q8(type);
    const std::string op = "gemv_" + std::string(quant_info(type).name);
    for (auto [rows, cols] : quantized ? shapes : float_shapes) {
      // Q8_0/Q4_0 differ from the CPU by the activation rounding (Q8_K here, Q8_0 there), an error relative to
      // |w| |x|, not to the result: over a handful of rows one small dot product can make the nmse
      // ill-conditioned, so its check starts at 64 rows.
      if ((type == QuantType::Q8_0 || type == QuantType::Q4_0) && rows < 64) continue;
      const auto wf = random_vector(rows * cols, rng, 0.05f);
      auto x = random_vector(cols, rng);
      const std::size_t rb = quant_row_bytes(type, cols);
      std::vector<std::byte> w(rows * rb);
      for (std::size_t r = 0; r < rows; ++r)
        quantize(type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
      for (bool round_x : {false, true}) {
        if (round_x && type != QuantType::F16) continue;
        std::vector<float> xr = x;
        if (round_x) {
          std::vector<std::uint16_t> h(cols);
          ops::f32_to_f16(x, h);
          ops::f16_to_f32(h, xr);
        }
        std::vector<float> want(rows);
        quant_matvec(type, w, rows, cols, xr, want);
        DeviceBuffer dw = to_device(w), dx = to_device(x);
        DeviceBuffer dy(test_context(), rows * 4);
        std::optional<Q8Activations> q;
        if (quantized) {
          q.emplace(test_context(), cols);
          quantize_q8_k(c, dx.ptr(), *q);
        }
        gemv(c, type, dw.ptr(), rows, cols, dx.ptr(), q ? &*q : nullptr, dy.ptr(), round_x);
        expect_contract(op, from_device(dy, rows), want, std::to_string(rows) + "x" + std::to_string(cols) + (round_x ? " round_x" : ""));
        if (has_split_layout(type)) {  // the same rows split on the device (Note [Q8_0 rows split for the GPU])
          DeviceBuffer split(test_context(), w.size());
          split_rows(c, type, dw.ptr(), split.ptr(), rows, cols);
          gemv(c, type, split.ptr(), rows, cols, dx.ptr(), &*q, dy.ptr(), false, false, WeightLayout::Split);
          expect_contract(op + "_split", from_device(dy, rows), want, std::to_string(rows) + "x" + std::to_string(cols) + " split");
        }
      }
    }
  }
}

// Three matrices of one type in one launch, accumulating into y: each y_i = y0_i + W_i x.
TEST(CudaGpu, GemvMultiAndAccumulateMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 5);
  for (QuantType type : kWeightTypes) {
    const std::string op = "gemv_" + std::string(quant_info(type).name);
    const std::size_t cols = 512, rows[3] = {64, 67, 130};
    const auto x = random_vector(cols, rng);
    DeviceBuffer dx = to_device(x);
    std::optional<Q8Activations> q;
    if (gemv_takes_q8(type)) {
      q.emplace(test_context(), cols);
      quantize_q8_k(c, dx.ptr(), *q);
    }
    std::vector<DeviceBuffer> dw, dy;
    std::vector<std::vector<float>> want;
    std::vector<GemvTarget> targets;
    for (std::size_t m = 0; m < 3; ++m) {
      const auto wf = random_vector(rows[m] * cols, rng, 0.05f);
      const std::size_t rb = quant_row_bytes(type, cols);
      std::vector<std::byte> w(rows[m] * rb);
      for (std::size_t r = 0; r < rows[m]; ++r)
        quantize(type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
      const auto y0 = random_vector(rows[m], rng);
      std::vector<float> wx(rows[m]), expect(rows[m]);
      quant_matvec(type, w, rows[m], cols, x, wx);
      ops::add(y0, wx, expect);
      want.push_back(expect);
      dw.push_back(to_device(w));
      dy.push_back(to_device(y0));
      targets.push_back({dw.back().ptr(), rows[m], dy.back().ptr()});
    }
    if (has_split_layout(type)) {  // the split rows first, into copies of the y0s
      std::vector<DeviceBuffer> ds, dy2;
      std::vector<GemvTarget> split_targets;
      for (std::size_t m = 0; m < 3; ++m) {
        ds.emplace_back(test_context(), rows[m] * quant_row_bytes(type, cols));
        split_rows(c, type, dw[m].ptr(), ds.back().ptr(), rows[m], cols);
        dy2.push_back(to_device(from_device(dy[m], rows[m])));
        split_targets.push_back({ds.back().ptr(), rows[m], dy2.back().ptr()});
      }
      gemv_multi(c, type, split_targets, cols, dx.ptr(), &*q, false, true, WeightLayout::Split);
      for (std::size_t m = 0; m < 3; ++m)
        expect_contract(op + "_split", from_device(dy2[m], rows[m]), want[m], "matrix " + std::to_string(m) + " of 3, split, accumulate");
    }
    gemv_multi(c, type, targets, cols, dx.ptr(), q ? &*q : nullptr, false, true);
    for (std::size_t m = 0; m < 3; ++m)
      expect_contract(op, from_device(dy[m], rows[m]), want[m], "matrix " + std::to_string(m) + " of 3, accumulate");
  }
}

// Note [Q4_K and Q6_K in one launch]: one or two Q4_K matrices and a Q6_K one (split layout) in one launch
// give what the launch of each type gives, bit for bit, stored or accumulated.
TEST(CudaGpu, Q4KAndQ6KInOneLaunchEqualTheirOwnLaunches) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 71);
  struct Shape { std::size_t cols, rows_q, rows_k, rows_v; bool accumulate; };
  for (Shape sh : {Shape{4096, 512, 520, 1024, false}, Shape{512, 64, 67, 130, true}, Shape{256, 9, 0, 1000, false},
                   Shape{2048, 2048, 256, 256, true}}) {
    const std::string what = std::to_string(sh.rows_q) + "/" + std::to_string(sh.rows_k) + "/" + std::to_string(sh.rows_v) + " x " +
                             std::to_string(sh.cols) + (sh.accumulate ? ", accumulate" : "");
    const auto x = random_vector(sh.cols, rng);
    DeviceBuffer dx = to_device(x);
    Q8Activations q(c, sh.cols);
    quantize_q8_k(c, dx.ptr(), q);
    const auto matrix = [&](QuantType type, std::size_t rows) {
      const auto wf = random_vector(rows * sh.cols, rng, 0.05f);
      const std::size_t rb = quant_row_bytes(type, sh.cols);
      std::vector<std::byte> w(rows * rb);
      for (std::size_t r = 0; r < rows; ++r) quantize(type, std::span(wf).subspan(r * sh.cols, sh.cols), std::span(w).subspan(r * rb, rb));
      return to_device(w);
    };
    std::vector<DeviceBuffer> w4;
    for (std::size_t rows : {sh.rows_q, sh.rows_k})
      if (rows > 0) w4.push_back(matrix(QuantType::Q4_K, rows));
    const std::size_t rows4[2] = {sh.rows_q, sh.rows_k};
    DeviceBuffer w6file = matrix(QuantType::Q6_K, sh.rows_v), w6(c, sh.rows_v * quant_row_bytes(QuantType::Q6_K, sh.cols));
    split_rows(c, QuantType::Q6_K, w6file.ptr(), w6.ptr(), sh.rows_v, sh.cols);
    const auto y0_4 = random_vector(sh.rows_q + sh.rows_k, rng), y0_6 = random_vector(sh.rows_v, rng);
    const auto run = [&](bool mixed) {
      DeviceBuffer y4 = to_device(y0_4), y6 = to_device(y0_6);
      std::vector<GemvTarget> t4;
      for (std::size_t i = 0; i < w4.size(); ++i) t4.push_back({w4[i].ptr(), rows4[i], y4.ptr() + (i == 0 ? 0 : sh.rows_q * 4)});
      const GemvTarget t6{w6.ptr(), sh.rows_v, y6.ptr()};
      if (mixed) {
        gemv_q4_k_q6_k(c, t4, t6, sh.cols, q, sh.accumulate);
      } else {
        gemv_multi(c, QuantType::Q4_K, t4, sh.cols, dx.ptr(), &q, false, sh.accumulate);
        gemv_multi(c, QuantType::Q6_K, std::span(&t6, 1), sh.cols, dx.ptr(), &q, false, sh.accumulate, WeightLayout::Split);
      }
      auto y = from_device(y4, y0_4.size());
      const auto v = from_device(y6, sh.rows_v);
      y.insert(y.end(), v.begin(), v.end());
      return y;
    };
    const auto want = run(false), got = run(true);
    gpu_contract("gemv_q4_k_q6_k_split");
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << what;
    std::vector<float> y0 = y0_4;
    y0.insert(y0.end(), y0_6.begin(), y0_6.end());
    EXPECT_NE(got, y0) << what << ": y was written";
  }
  // Refused: three Q4_K matrices, widths not of 256s, a Q6_K matrix not 16-byte aligned.
  DeviceBuffer any(c, 1 << 16);
  Q8Activations q(c, 512);
  const GemvTarget t{any.ptr(), 4, any.ptr()};
  const std::vector<GemvTarget> three(3, t), one(1, t);
  EXPECT_THROW(gemv_q4_k_q6_k(c, three, t, 512, q), InvalidArgument);
  EXPECT_THROW(gemv_q4_k_q6_k(c, one, t, 500, q), InvalidArgument);
  EXPECT_THROW(gemv_q4_k_q6_k(c, one, GemvTarget{any.ptr() + 2, 4, any.ptr()}, 512, q), InvalidArgument);
}

// Note [A warp's loads across its row groups]: gemv_q4_k_stream (and q5_k) give gemv_q4_k's y bit for bit,
// stored or accumulated, over one to three matrices. Each shape has more groups of 4 rows per matrix than an
// H200 holds warps for it (2,112 over the launch's matrices), so warps take several groups each; the widths
// give a group's steps ending on either of the two slots, and lanes with no block in a group's last step.
TEST(CudaGpu, GemvStreamOverRowGroupsEqualsOneGroupAWarp) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 83);
  struct Shape { QuantType type; std::size_t cols; std::vector<std::size_t> rows; bool accumulate; };
  const Shape shapes[] = {{QuantType::Q4_K, 512, {40001}, false},          {QuantType::Q4_K, 768, {9001, 3000, 17}, true},
                          {QuantType::Q4_K, 1280, {20000, 21}, false},      {QuantType::Q4_K, 4096, {11008, 11008}, false},
                          {QuantType::Q4_K, 11008, {9000}, true},           {QuantType::Q5_K, 1280, {20003}, true},
                          {QuantType::Q5_K, 4096, {4096, 1024, 1024}, false}};
  for (const Shape& sh : shapes) {
    std::string what = std::string(quant_info(sh.type).name) + " " + std::to_string(sh.cols) + " wide, rows";
    for (std::size_t r : sh.rows) what += " " + std::to_string(r);
    const auto x = random_vector(sh.cols, rng);
    DeviceBuffer dx = to_device(x);
    Q8Activations q(c, sh.cols);
    quantize_q8_k(c, dx.ptr(), q);
    std::vector<DeviceBuffer> w;
    std::vector<float> y0;
    for (std::size_t rows : sh.rows) {
      // random bytes are valid blocks but for d and dmin, which must be finite: set them to small f16s
      std::vector<std::byte> bytes(rows * quant_row_bytes(sh.type, sh.cols));
      for (auto& b : bytes) b = static_cast<std::byte>(rng());
      const std::size_t block = sh.type == QuantType::Q4_K ? 144 : 176;
      for (std::size_t o = 0; o < bytes.size(); o += block)
        for (std::size_t k = 0; k < 4; k += 2) bytes[o + k] = static_cast<std::byte>(rng()), bytes[o + k + 1] = std::byte{0x1c};
      w.push_back(to_device(bytes));
      const auto y = random_vector(rows, rng);
      y0.insert(y0.end(), y.begin(), y.end());
    }
    const auto run = [&](K45Rows how) {
      DeviceBuffer dy = to_device(y0);
      std::vector<GemvTarget> t;
      std::size_t at = 0;
      for (std::size_t i = 0; i < w.size(); ++i) t.push_back({w[i].ptr(), sh.rows[i], dy.ptr() + at * 4}), at += sh.rows[i];
      gemv_k45(c, sh.type, t, sh.cols, q, sh.accumulate, how);
      return from_device(dy, y0.size());
    };
    const auto want = run(K45Rows::OneGroup), got = run(K45Rows::Stream);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << what;
    std::size_t written = 0;
    for (std::size_t i = 0; i < got.size(); ++i) written += got[i] != y0[i];
    EXPECT_GT(written, got.size() * 9 / 10) << what << ": y was written";
  }
  gpu_contract("gemv_q4_k_stream");
  gpu_contract("gemv_q5_k_stream");
  DeviceBuffer any(c, 1 << 16);
  Q8Activations q(c, 512);
  const GemvTarget t{any.ptr(), 4, any.ptr()};
  EXPECT_THROW(gemv_k45(c, QuantType::Q6_K, std::span(&t, 1), 512, q, false, K45Rows::Stream), InvalidArgument);
  EXPECT_THROW(gemv_k45(c, QuantType::Q4_K, std::span(&t, 1), 500, q, false, K45Rows::Stream), ShapeError);
}

TEST(CudaGpu, ElementwiseLayerOpsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 2);
  for (std::size_t n : {64u, 172u, 173u, 4096u, 14336u}) {
    const auto x = random_vector(n, rng), y = random_vector(n, rng), w = random_vector(n, rng);
    {  // rmsnorm, 3 rows
      std::vector<float> x3 = random_vector(3 * n, rng), want(3 * n);
      for (int r = 0; r < 3; ++r)
        ops::rmsnorm(std::span(x3).subspan(r * n, n), w, 1e-5f, std::span(want).subspan(r * n, n));
      DeviceBuffer dx = to_device(x3), dw = to_device(w);
      DeviceBuffer out(test_context(), 3 * n * 4);
      rmsnorm(c, dx.ptr(), dw.ptr(), 1e-5f, out.ptr(), 3, n);
      expect_contract("rmsnorm", from_device(out, 3 * n), want, std::to_string(n));
    }
    {  // swiglu
      std::vector<float> want(n);
      ops::swiglu(x, y, want);
      DeviceBuffer dg = to_device(x), du = to_device(y);
      swiglu(c, dg.ptr(), du.ptr(), n);
      const auto got = from_device(dg, n);
      expect_contract("swiglu", got, want, std::to_string(n));
      if (n % 4 == 0) {  // that was swiglu_v4; one float past 16-byte alignment takes swiglu itself
        std::vector<float> g1(n + 1), u1(n + 1);
        std::copy(x.begin(), x.end(), g1.begin() + 1), std::copy(y.begin(), y.end(), u1.begin() + 1);
        DeviceBuffer dg1 = to_device(g1), du1 = to_device(u1);
        swiglu(c, dg1.ptr() + 4, du1.ptr() + 4, n);
        const auto scalar = from_device(dg1, n + 1);
        expect_contract("swiglu_v4", got, std::vector<float>(scalar.begin() + 1, scalar.end()), std::to_string(n) + " against swiglu");
      }
    }
    {  // add
      std::vector<float> want(n);
      ops::add(x, y, want);
      DeviceBuffer dx = to_device(x), dy = to_device(y);
      add_inplace(c, dx.ptr(), dy.ptr(), n);
      expect_contract("add_inplace", from_device(dx, n), want, std::to_string(n));
    }
  }
}

TEST(CudaGpu, RopeAndKvAppendMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 3);
  struct Shape { int heads, hd, rope_dim; bool neox, freqs; };
  for (Shape sh : {Shape{8, 8, 8, false, false}, Shape{32, 128, 128, false, true}, Shape{14, 64, 64, true, false}, Shape{4, 64, 32, false, false}}) {
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
      DeviceBuffer dv = to_device(v), df = to_device(freqs), dpos = to_device(&pos, sizeof pos);
      rope(c, dv.ptr(), sh.heads, dpos.ptr(), RopeParams{sh.hd, sh.rope_dim, ts, sh.freqs ? df.ptr() : 0, sh.neox});
      expect_contract("rope", from_device(dv, n), want, std::to_string(sh.heads) + "x" + std::to_string(sh.hd) + " pos " + std::to_string(pos));
    }
  }
  // kv_append: f16 into slot pos, neighbours untouched.
  const int n = 256, slots = 4, pos = 2;
  const auto k = random_vector(n, rng), v = random_vector(n, rng);
  DeviceBuffer dk = to_device(k), dv = to_device(v);
  DeviceBuffer kc(test_context(), slots * n * 2), vc(test_context(), slots * n * 2);
  check(c.driver().memset_d8_async(kc.ptr(), 0, kc.bytes(), c.stream()), "memset");
  check(c.driver().memset_d8_async(vc.ptr(), 0, vc.bytes(), c.stream()), "memset");
  DeviceBuffer dpos = to_device(&pos, sizeof pos);
  kv_append(c, dk.ptr(), dv.ptr(), kc.ptr(), vc.ptr(), dpos.ptr(), n);
  c.synchronize();
  std::vector<std::uint16_t> gk(slots * n), gv(slots * n), wk(n), wv(n);
  kc.download(gk.data(), kc.bytes());
  vc.download(gv.data(), vc.bytes());
  ops::f32_to_f16(k, wk);
  ops::f32_to_f16(v, wv);
  std::vector<float> got, want;
  for (int i = 0; i < slots * n; ++i) {
    const bool in = i / n == pos;
    got.push_back(static_cast<float>(gk[i])), got.push_back(static_cast<float>(gv[i]));
    want.push_back(in ? static_cast<float>(wk[i % n]) : 0.0f), want.push_back(in ? static_cast<float>(wv[i % n]) : 0.0f);
  }
  expect_contract("kv_append", got, want, "f16 bits, 4 slots");
}

TEST(CudaGpu, FusedLayerOpsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 6);
  for (std::size_t n : {256u, 4096u, 14336u}) {
    const auto x = random_vector(n, rng), w = random_vector(n, rng), u = random_vector(n, rng);
    {
      std::vector<float> want(n);
      ops::rmsnorm(x, w, 1e-5f, want);
      DeviceBuffer dx = to_device(x), dw = to_device(w);
      DeviceBuffer xn(test_context(), n * 4);
      Q8Activations q(test_context(), n);
      rmsnorm_quantize(c, dx.ptr(), dw.ptr(), 1e-5f, xn.ptr(), q);
      const auto got = from_device(xn, n);
      expect_contract("rmsnorm_quantize", got, want, std::to_string(n));
      expect_q8_of(got, q, "rmsnorm_quantize " + std::to_string(n));
    }
    {
      std::vector<float> want(n);
      ops::swiglu(x, u, want);
      DeviceBuffer dg = to_device(x), du = to_device(u);
      Q8Activations q(test_context(), n);
      swiglu_quantize(c, dg.ptr(), du.ptr(), q);
      const auto got = from_device(dg, n);
      expect_contract("swiglu_quantize", got, want, std::to_string(n));
      expect_q8_of(got, q, "swiglu_quantize " + std::to_string(n));
    }
  }
  struct Shape { int n_head, n_kv, hd, rope_dim; bool neox; };
  for (Shape sh : {Shape{8, 4, 8, 8, false}, Shape{32, 8, 128, 128, false}, Shape{14, 2, 64, 64, true}, Shape{4, 2, 64, 32, false}}) {
    const int pos = 37, slots = 40, kv_row = sh.n_kv * sh.hd;
    const auto q = random_vector(static_cast<std::size_t>(sh.n_head) * sh.hd, rng), k = random_vector(kv_row, rng),
               v = random_vector(kv_row, rng);
    const float ts = std::pow(10000.0f, -2.0f / static_cast<float>(sh.rope_dim));
    auto rotate = [&](std::vector<float> t, int heads) {  // the CPU's formula (realizar Session::rope)
      float theta = static_cast<float>(pos);
      for (int i = 0; i < sh.rope_dim / 2; ++i, theta *= ts) {
        const float cs = std::cos(theta), sn = std::sin(theta);
        for (int h = 0; h < heads; ++h) {
          float* p = t.data() + h * sh.hd;
          const int a = sh.neox ? i : 2 * i, b = sh.neox ? i + sh.rope_dim / 2 : 2 * i + 1;
          const float x0 = p[a], x1 = p[b];
          p[a] = x0 * cs - x1 * sn, p[b] = x0 * sn + x1 * cs;
        }
      }
      return t;
    };
    DeviceBuffer dq = to_device(q), dk = to_device(k), dv = to_device(v), dpos = to_device(&pos, sizeof pos);
    DeviceBuffer kc(test_context(), static_cast<std::size_t>(slots) * kv_row * 2), vc(test_context(), static_cast<std::size_t>(slots) * kv_row * 2);
    rope_append(c, dq.ptr(), dk.ptr(), dv.ptr(), sh.n_head, sh.n_kv, dpos.ptr(), RopeParams{sh.hd, sh.rope_dim, ts, 0, sh.neox},
                kc.ptr(), vc.ptr());
    const std::string what = std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " x " + std::to_string(sh.hd);
    const auto gq = from_device(dq, q.size()), gk = from_device(dk, k.size());
    expect_contract("rope_append", gq, rotate(q, sh.n_head), "q " + what);
    expect_contract("rope_append", gk, rotate(k, sh.n_kv), "k " + what);
    std::vector<std::uint16_t> ck(kv_row), cv(kv_row), wk(kv_row), wv(kv_row);
    kc.download(ck.data(), kv_row * 2, static_cast<std::size_t>(pos) * kv_row * 2);
    vc.download(cv.data(), kv_row * 2, static_cast<std::size_t>(pos) * kv_row * 2);
    ops::f32_to_f16(gk, wk);
    ops::f32_to_f16(v, wv);
    EXPECT_EQ(ck, wk) << "k cache slot " << what;
    EXPECT_EQ(cv, wv) << "v cache slot " << what;
  }
}

TEST(CudaGpu, AttentionDecodeMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 4);
  struct Shape { int n_head, n_kv, hd, n; };
  for (Shape sh : {Shape{8, 4, 8, 1}, Shape{8, 4, 8, 69}, Shape{32, 8, 128, 1000}, Shape{4, 2, 64, 513}, Shape{32, 32, 128, 64},
                   Shape{8, 8, 80, 4100}, Shape{4, 2, 128, 40000},  // 40000: 625 chunks, past the 256 threads of one pass
                   Shape{16, 4, 64, 255}, Shape{32, 32, 128, 129}, Shape{8, 2, 80, 185}}) {  // one block per head (<= 256)
    const int kv_row = sh.n_kv * sh.hd, group = sh.n_head / sh.n_kv;
    const auto q = random_vector(static_cast<std::size_t>(sh.n_head) * sh.hd, rng);
    const auto kf = random_vector(static_cast<std::size_t>(sh.n) * kv_row, rng), vf = random_vector(static_cast<std::size_t>(sh.n) * kv_row, rng);
    std::vector<std::uint16_t> kc(kf.size()), vc(vf.size());
    ops::f32_to_f16(kf, kc);
    ops::f32_to_f16(vf, vc);
    std::vector<float> k(kf.size()), v(vf.size());
    ops::f16_to_f32(kc, k);
    ops::f16_to_f32(vc, v);
    const std::vector<float> want = attention_reference(q, k, v, sh.n_head, sh.n_kv, sh.hd, sh.n);
    DeviceBuffer dq = to_device(q), dk = to_device(kc), dv = to_device(vc);
    DeviceBuffer out(test_context(), q.size() * 4);
    const int last = sh.n - 1;
    DeviceBuffer dpos = to_device(&last, sizeof last);
    AttentionScratch scratch(test_context(), sh.n + 70, sh.n_head, sh.hd);  // a longer context than filled: unused chunks skip
    // Launches over the whole context, or (as a bucket's graph does) only over the first sh.n positions.
    const int positions = sh.n % 2 == 0 ? 0 : sh.n;
    const std::string what =
        std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " heads x " + std::to_string(sh.hd) + ", " + std::to_string(sh.n) + " positions";
    attention_decode(c, dq.ptr(), dk.ptr(), dv.ptr(), out.ptr(), dpos.ptr(), scratch, sh.n_head, sh.hd, group, kv_row, positions,
                     AttentionKernels::Split);
    gpu_contract("attention_scores"), gpu_contract("attention_weights_v");
    expect_contract(attention_wide_combine(sh.hd) ? "attention_combine_wide" : "attention_combine", from_device(out, q.size()), want, what);
    // Note [One block per head]: a launch over at most 256 positions takes one block per head (as a bucket's
    // graph launches it, over the bucket's positions); longer ones split.
    const int bucket = sh.n <= 256 ? std::min(sh.n <= 64 ? 64 : sh.n <= 128 ? 128 : 256, sh.n + 70) : positions;
    const bool one_block = sh.n <= kOneBlockPositions && tuning_define("TRUENO_ATTENTION_ONE_BLOCK", 1) != 0;
    ASSERT_EQ(attention_one_block(scratch, bucket), one_block) << what;
    DeviceBuffer out2(test_context(), q.size() * 4);
    attention_decode(c, dq.ptr(), dk.ptr(), dv.ptr(), out2.ptr(), dpos.ptr(), scratch, sh.n_head, sh.hd, group, kv_row, bucket);
    if (one_block) expect_contract("attention_one_block", from_device(out2, q.size()), want, what);
    else EXPECT_EQ(from_device(out2, q.size()), from_device(out, q.size())) << what << ": split either way";
  }
  // A launch over 256 positions of a longer scratch takes one block per head too; over 257, splits.
  AttentionScratch long_scratch(test_context(), 4096, 8, 128);
  EXPECT_EQ(attention_one_block(long_scratch, 256), tuning_define("TRUENO_ATTENTION_ONE_BLOCK", 1) != 0);
  EXPECT_FALSE(attention_one_block(long_scratch, 257));
  EXPECT_FALSE(attention_one_block(long_scratch, 0));
}

// Note [Rope inside the attention]: rope_attention_one_block leaves the output and both caches as rope_append
// followed by the one-block attention does, bit for bit, and q and k unrotated.
TEST(CudaGpu, RopeInsideTheAttentionEqualsRopeAppendThenAttention) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 9);
  struct Shape { int n_head, n_kv, hd, rope_dim; bool neox; int pos, bucket; };
  for (Shape sh : {Shape{32, 32, 128, 128, false, 0, 64}, Shape{32, 4, 64, 64, true, 37, 64}, Shape{8, 2, 128, 64, false, 255, 256},
                   Shape{16, 16, 64, 64, false, 100, 128}, Shape{4, 1, 64, 32, true, 200, 256}}) {
    const int n_ctx = 300, kv_row = sh.n_kv * sh.hd, group = sh.n_head / sh.n_kv;
    AttentionScratch scratch(c, n_ctx, sh.n_head, sh.hd);
    const std::string what = std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " x " + std::to_string(sh.hd) + ", rope " +
                             std::to_string(sh.rope_dim) + (sh.neox ? " neox" : "") + ", position " + std::to_string(sh.pos);
    if (!rope_attention_fusable(scratch, sh.bucket, sh.hd, sh.rope_dim)) GTEST_SKIP() << "TRUENO_ROPE_ATTENTION=0 or one block per head off";
    const auto q = random_vector(static_cast<std::size_t>(sh.n_head) * sh.hd, rng), k = random_vector(kv_row, rng), v = random_vector(kv_row, rng);
    std::vector<std::uint16_t> cache(static_cast<std::size_t>(n_ctx) * kv_row * 2);
    ops::f32_to_f16(random_vector(cache.size(), rng), cache);  // K then V; the rows past pos are noise neither may read
    const std::size_t half = cache.size();  // bytes of one cache (K, then V, at this offset)
    const float ts = std::pow(10000.0f, -2.0f / static_cast<float>(sh.rope_dim));
    const RopeParams rope{sh.hd, sh.rope_dim, ts, 0, sh.neox};
    DeviceBuffer dpos = to_device(&sh.pos, sizeof sh.pos);
    DeviceBuffer q1 = to_device(q), k1 = to_device(k), v1 = to_device(v), c1 = to_device(cache), out1(c, q.size() * 4);
    rope_append(c, q1.ptr(), k1.ptr(), v1.ptr(), sh.n_head, sh.n_kv, dpos.ptr(), rope, c1.ptr(), c1.ptr() + half);
    attention_decode(c, q1.ptr(), c1.ptr(), c1.ptr() + half, out1.ptr(), dpos.ptr(), scratch, sh.n_head, sh.hd, group, kv_row, sh.bucket);
    DeviceBuffer q2 = to_device(q), k2 = to_device(k), v2 = to_device(v), c2 = to_device(cache), out2(c, q.size() * 4);
    rope_attention_one_block(c, q2.ptr(), k2.ptr(), v2.ptr(), sh.n_head, sh.n_kv, dpos.ptr(), rope, c2.ptr(), c2.ptr() + half, out2.ptr(),
                             scratch, sh.bucket);
    const auto want = from_device(out1, q.size()), got = from_device(out2, q.size());
    EXPECT_EQ(got, want) << what;
    EXPECT_NE(got, std::vector<float>(q.size(), 0.0f)) << what;
    std::vector<std::uint16_t> want_cache(cache.size()), got_cache(cache.size());
    c1.download(want_cache.data(), cache.size() * 2);
    c2.download(got_cache.data(), cache.size() * 2);
    EXPECT_EQ(got_cache, want_cache) << what << ": both caches, every position";
    EXPECT_NE(got_cache, cache) << what << ": the step's row was appended";
    EXPECT_EQ(from_device(q2, q.size()), q) << what << ": q stays unrotated";
    EXPECT_EQ(from_device(k2, k.size()), k) << what << ": k stays unrotated";
  }
  AttentionScratch scratch(c, 4096, 8, 128);
  DeviceBuffer any(c, 1 << 20);
  const RopeParams rope{80, 80, 0.9f, 0, false};
  EXPECT_THROW(rope_attention_one_block(c, any.ptr(), any.ptr(), any.ptr(), 8, 8, any.ptr(), rope, any.ptr(), any.ptr(), any.ptr(), scratch, 256),
               InvalidArgument);  // heads of 80
  const RopeParams rope128{128, 128, 0.9f, 0, false};
  EXPECT_THROW(rope_attention_one_block(c, any.ptr(), any.ptr(), any.ptr(), 8, 8, any.ptr(), rope128, any.ptr(), any.ptr(), any.ptr(), scratch, 512),
               InvalidArgument);  // past one block's 256 positions
  EXPECT_THROW(rope_attention_one_block(c, any.ptr(), any.ptr(), any.ptr(), 8, 3, any.ptr(), rope128, any.ptr(), any.ptr(), any.ptr(), scratch, 256),
               InvalidArgument);  // 8 heads over 3 KV heads
}

// The batched step's kernels (kernels/batch_ops.cu) against the single sequence's, on identical inputs: three
// sequences of different lengths, caches and context sizes in one launch equal three single launches bit for
// bit (the same device bodies).
TEST(CudaGpu, BatchedDecodeOpsEqualTheSingleSequenceOnes) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 11);
  const int n_head = 8, n_kv = 2, hd = 64, kv_row = n_kv * hd, group = n_head / n_kv, layers = 2, layer = 1;
  const RopeParams rope{hd, hd, std::pow(10000.0f, -2.0f / hd), 0, false};
  struct Seq { int n_ctx, pos; };
  const std::vector<Seq> seqs = {{100, 0}, {300, 77}, {130, 129}};
  const int B = static_cast<int>(seqs.size()), max_ctx = 300;
  const auto q = random_vector(static_cast<std::size_t>(B) * n_head * hd, rng);
  const auto k = random_vector(static_cast<std::size_t>(B) * kv_row, rng), v = random_vector(static_cast<std::size_t>(B) * kv_row, rng);
  std::vector<std::vector<std::uint16_t>> caches;  // per sequence: k then v, [layers][n_ctx][kv_row] each
  for (const Seq& sq : seqs) {
    const auto f = random_vector(2 * static_cast<std::size_t>(layers) * sq.n_ctx * kv_row, rng);
    std::vector<std::uint16_t> h(f.size());
    ops::f32_to_f16(f, h);
    caches.push_back(h);
  }
  // Single: each sequence's rope_append then attention_decode, as the decode step launches them.
  std::vector<float> want_q, want_out;
  std::vector<std::vector<std::uint16_t>> want_caches;
  for (int z = 0; z < B; ++z) {
    const Seq& sq = seqs[z];
    const std::size_t per = static_cast<std::size_t>(layers) * sq.n_ctx * kv_row, off = static_cast<std::size_t>(layer) * sq.n_ctx * kv_row;
    DeviceBuffer dq = to_device(q.data() + z * n_head * hd, n_head * hd * 4), dk = to_device(k.data() + z * kv_row, kv_row * 4),
                 dv = to_device(v.data() + z * kv_row, kv_row * 4), dc = to_device(caches[z]), dpos = to_device(&sq.pos, 4);
    rope_append(c, dq.ptr(), dk.ptr(), dv.ptr(), n_head, n_kv, dpos.ptr(), rope, dc.ptr() + off * 2, dc.ptr() + (per + off) * 2);
    AttentionScratch scratch(c, sq.n_ctx, n_head, hd);
    DeviceBuffer out(c, n_head * hd * 4);
    attention_decode(c, dq.ptr(), dc.ptr() + off * 2, dc.ptr() + (per + off) * 2, out.ptr(), dpos.ptr(), scratch, n_head, hd, group, kv_row, 0,
                     AttentionKernels::Split);
    const auto qz = from_device(dq, n_head * hd), oz = from_device(out, n_head * hd);
    want_q.insert(want_q.end(), qz.begin(), qz.end()), want_out.insert(want_out.end(), oz.begin(), oz.end());
    std::vector<std::uint16_t> cz(caches[z].size());
    dc.download(cz.data(), cz.size() * 2);
    want_caches.push_back(cz);
  }
  // Batched: one launch each over the three.
  DeviceBuffer dq = to_device(q), dk = to_device(k), dv = to_device(v), out(c, q.size() * 4);
  std::vector<DeviceBuffer> dc, dpos;
  std::vector<BatchRow> rows;
  for (int z = 0; z < B; ++z) {
    dc.push_back(to_device(caches[z])), dpos.push_back(to_device(&seqs[z].pos, 4));
    const std::uint64_t per = static_cast<std::uint64_t>(layers) * seqs[z].n_ctx * kv_row;
    rows.push_back({dpos.back().ptr(), dc.back().ptr(), dc.back().ptr() + per * 2, static_cast<std::uint64_t>(seqs[z].n_ctx) * kv_row});
  }
  DeviceBuffer drows = to_device(rows.data(), rows.size() * sizeof(BatchRow));
  BatchAttentionScratch scratch(c, 4, max_ctx, n_head, hd);
  rope_append_batched(c, dq.ptr(), dk.ptr(), dv.ptr(), B, drows.ptr(), layer, n_head, n_kv, rope);
  attention_decode_batched(c, dq.ptr(), out.ptr(), B, drows.ptr(), layer, scratch, n_head, hd, group, kv_row, 192);
  expect_contract("rope_append_batched", from_device(dq, q.size()), want_q, "rotated q of 3 sequences");
  for (int z = 0; z < B; ++z) {
    std::vector<std::uint16_t> cz(caches[z].size());
    dc[z].download(cz.data(), cz.size() * 2);
    EXPECT_EQ(cz, want_caches[z]) << "the caches of sequence " << z;
  }
  gpu_contract("attention_scores_batched"), gpu_contract("attention_weights_v_batched");
  expect_contract("attention_combine_batched", from_device(out, q.size()), want_out, "attention of 3 sequences at positions 0, 77, 129");
  EXPECT_THROW(attention_decode_batched(c, dq.ptr(), out.ptr(), 5, drows.ptr(), layer, scratch, n_head, hd, group, kv_row, 192), InvalidArgument);
}

TEST(CudaGpu, DequantizeToF16MatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 7);
  // Block formats (rows of 8-element groups), then float rows of an odd width (one element per thread).
  std::vector<std::pair<QuantType, std::size_t>> cases;
  for (QuantType type : kWeightTypes) cases.emplace_back(type, 768);
  cases.emplace_back(QuantType::F32, 13), cases.emplace_back(QuantType::BF16, 13);
  for (const auto& [type, cols] : cases) {
    const std::size_t rows = 37, rb = quant_row_bytes(type, cols);
    const auto wf = random_vector(rows * cols, rng, 0.05f);
    std::vector<std::byte> w(rows * rb);
    for (std::size_t r = 0; r < rows; ++r) quantize(type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
    std::vector<float> deq(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
      dequantize(QuantRow::view(type, std::span(w).subspan(r * rb, rb), cols), std::span(deq).subspan(r * cols, cols));
    std::vector<std::uint16_t> want(rows * cols), got(rows * cols);
    ops::f32_to_f16(deq, want);
    DeviceBuffer dw = to_device(w);
    DeviceBuffer out(test_context(), rows * cols * 2);
    dequantize_f16(c, type, dw.ptr(), rows, cols, out.ptr());
    c.synchronize();
    out.download(got.data(), got.size() * 2);
    std::vector<float> gf(got.begin(), got.end()), wf16(want.begin(), want.end());  // the bits, compared exactly
    const std::string op = "dequant_" + std::string(quant_info(type).name) + "_f16";
    if (type == QuantType::F16)
      EXPECT_EQ(got, want) << "f16 weights are copied";
    else
      expect_contract(op, gf, wf16, std::to_string(rows) + "x" + std::to_string(cols));
    if (has_split_layout(type)) {  // the same rows split (gemv.h's WeightLayout)
      DeviceBuffer split(test_context(), w.size());
      split_rows(c, type, dw.ptr(), split.ptr(), rows, cols);
      dequantize_f16(c, type, split.ptr(), rows, cols, out.ptr(), nullptr, WeightLayout::Split);
      c.synchronize();
      out.download(got.data(), got.size() * 2);
      std::vector<float> gs(got.begin(), got.end());
      expect_contract(op.substr(0, op.size() - 4) + "s_f16", gs, wf16, std::to_string(rows) + "x" + std::to_string(cols) + " split");
    }
  }
}

// split_rows is a permutation of a matrix's bytes: Q8_0 each row's quants in block order, then its scales
// (Note [Q8_0 rows split for the GPU]); Q6_K four planes of every block's ql, qh, scales and d (Note [Q6_K
// planes for the GPU]). Bad arguments are refused with their reason.
TEST(CudaGpu, SplitRowsPermuteTheFileBytes) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 13);
  for (QuantType type : {QuantType::Q8_0, QuantType::Q6_K})
    for (auto [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{{1, 256}, {3, 768}, {130, 4096}, {5, 11008}}) {
      const std::size_t rb = quant_row_bytes(type, cols);
      std::vector<std::byte> w(rows * rb), want(rows * rb);
      for (auto& b : w) b = static_cast<std::byte>(rng());
      if (type == QuantType::Q8_0) {
        const std::size_t nb = cols / 32;
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t b = 0; b < nb; ++b) {
            const std::byte* block = w.data() + r * rb + b * 34;
            std::memcpy(want.data() + r * rb + 32 * b, block + 2, 32);
            std::memcpy(want.data() + r * rb + 32 * nb + 2 * b, block, 2);
          }
      } else {
        const std::size_t n = rows * cols / 256;
        for (std::size_t i = 0; i < n; ++i) {
          const std::byte* block = w.data() + i * 210;
          std::memcpy(want.data() + 128 * i, block, 128);
          std::memcpy(want.data() + 128 * n + 64 * i, block + 128, 64);
          std::memcpy(want.data() + 192 * n + 16 * i, block + 192, 16);
          std::memcpy(want.data() + 208 * n + 2 * i, block + 208, 2);
        }
      }
      DeviceBuffer dw = to_device(w), split(test_context(), w.size());
      split_rows(c, type, dw.ptr(), split.ptr(), rows, cols);
      c.synchronize();
      std::vector<std::byte> got(w.size());
      split.download(got.data(), got.size());
      EXPECT_TRUE(got == want) << quant_info(type).name << " " << rows << "x" << cols;
    }
  DeviceBuffer a(test_context(), 4096 * 34), b(test_context(), 4096 * 34);
  EXPECT_THROW(split_rows(c, QuantType::Q4_K, a.ptr(), b.ptr(), 1, 256), InvalidArgument);
  EXPECT_THROW(split_rows(c, QuantType::Q8_0, a.ptr(), b.ptr(), 1, 96), ShapeError);
  EXPECT_THROW(split_rows(c, QuantType::Q8_0, a.ptr(), a.ptr() + 256, 4, 256), InvalidArgument);
  EXPECT_THROW(split_rows(c, QuantType::Q8_0, a.ptr() + 2, b.ptr(), 1, 256), InvalidArgument);
  Q8Activations q(test_context(), 256);
  EXPECT_THROW(gemv(c, QuantType::Q4_K, a.ptr(), 1, 256, 0, &q, b.ptr(), false, false, WeightLayout::Split), InvalidArgument);
  EXPECT_THROW(dequantize_f16(c, QuantType::Q4_K, a.ptr(), 1, 256, b.ptr(), nullptr, WeightLayout::Split), InvalidArgument);
  gpu_contract("repack_q8_0_split"), gpu_contract("repack_q6_k_split");
}

// Prefill's product: Q4_K weights -> f16 on the device, f32 activations -> f16, cuBLAS with f32
// accumulation, against the f64 product of the same f16 values; then beta = 1 adds to y.
TEST(CudaGpu, CublasGemmF16MatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::string why;
  if (cublas(&why) == nullptr) GTEST_SKIP() << "skipped: " << why;
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 8);
  for (auto [rows, T, cols] : {std::tuple<std::size_t, std::size_t, std::size_t>{64, 1, 256}, {333, 17, 512}, {1024, 128, 4096}}) {
    const auto wf = random_vector(rows * cols, rng, 0.05f), x = random_vector(T * cols, rng), y0 = random_vector(T * rows, rng);
    const std::size_t rb = quant_row_bytes(QuantType::Q4_K, cols);
    std::vector<std::byte> w(rows * rb);
    for (std::size_t r = 0; r < rows; ++r) quantize(QuantType::Q4_K, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
    std::vector<float> wd(rows * cols), w16(rows * cols), x16(T * cols);
    for (std::size_t r = 0; r < rows; ++r)
      dequantize(QuantRow::view(QuantType::Q4_K, std::span(w).subspan(r * rb, rb), cols), std::span(wd).subspan(r * cols, cols));
    std::vector<std::uint16_t> h(std::max(wd.size(), x.size()));
    ops::f32_to_f16(wd, std::span(h).first(wd.size()));
    ops::f16_to_f32(std::span(h).first(wd.size()), w16);
    ops::f32_to_f16(x, std::span(h).first(x.size()));
    ops::f16_to_f32(std::span(h).first(x.size()), x16);
    std::vector<float> want(T * rows);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t r = 0; r < rows; ++r) {
        double acc = 0;
        for (std::size_t k = 0; k < cols; ++k) acc += double{x16[t * cols + k]} * w16[r * cols + k];
        want[t * rows + r] = static_cast<float>(acc + y0[t * rows + r]);
      }
    DeviceBuffer dw = to_device(w), dx = to_device(x), dy = to_device(y0);
    DeviceBuffer w_f16(test_context(), rows * cols * 2), x_f16(test_context(), T * cols * 2);
    dequantize_f16(c, QuantType::Q4_K, dw.ptr(), rows, cols, w_f16.ptr());
    dequantize_f16(c, QuantType::F32, dx.ptr(), T, cols, x_f16.ptr());
    gemm_f16(c, rows, T, cols, w_f16.ptr(), x_f16.ptr(), dy.ptr(), 1.0f);
    expect_contract("gemm_f16", from_device(dy, T * rows), want,
                    std::to_string(T) + "x" + std::to_string(cols) + " times " + std::to_string(rows) + " rows, beta 1");
  }
}

TEST(CudaGpu, ShapeErrorsAreNamed) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  EXPECT_THROW(Q8Activations(test_context(), 100), ShapeError);
  Context& c = test_context();
  Q8Activations q(test_context(), 256);
  EXPECT_THROW(gemv_q4_k(c, 0, 4, 512, q, 0), ShapeError);
}

}  // namespace
}  // namespace trueno::cuda
