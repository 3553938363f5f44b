// The CUDA layer: loading and reporting without a GPU, NVRTC compilation and the cubin cache (where
// NVRTC is installed), and every CUDA kernel against its CPU kernel by the obligations of
// contracts/gpu/cuda.yaml (CudaGpu.*, label gpu: a visible skip on machines without a CUDA device).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "contract/contract_spec.h"
#include "cuda/context.h"
#include "cuda/kernels.h"
#include "cuda/nvrtc.h"
#include "cuda/ops/gemv.h"
#include "quant/blocks.h"
#include "trueno/backend.h"
#include "trueno/quant.h"

namespace trueno::cuda {
namespace {

std::uint64_t test_seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("TRUENO_TEST_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("[cuda] seed %llu (rerun with TRUENO_TEST_SEED=%llu)\n", static_cast<unsigned long long>(v),
                static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

YAML::Node gpu_contract(const std::string& op) {
  const YAML::Node root = YAML::LoadFile(test::contracts_dir() + "/gpu/cuda.yaml");
  const YAML::Node node = root["ops"][op];
  if (!node) ADD_FAILURE() << "contracts/gpu/cuda.yaml has no contract for CUDA op '" << op << "'";
  return node;
}

TEST(Cuda, BackendReportSaysWhyWhenUnavailable) {
  std::string why;
  const auto dev = probe(&why);
  const auto report = backend_report();
  const BackendStatus& s = report[static_cast<int>(Backend::CUDA)];
  EXPECT_EQ(s.available, dev.has_value());
  if (dev) {
    std::printf("CUDA device: %s\n", dev->describe().c_str());
    EXPECT_EQ(s.reason, dev->describe());
  } else {
    std::printf("CUDA unavailable here: %s\n", why.c_str());
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(s.reason, why);
    EXPECT_THROW(Context::get(), BackendUnavailable);
  }
}

TEST(Cuda, EveryModuleHasAContract) {
  for (const KernelSource& k : kernel_sources()) {
    if (is_header(k) || std::string_view(k.module).starts_with("bench_")) continue;
    EXPECT_TRUE(gpu_contract(k.module)) << k.module;
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
  const KernelSource& k = kernel_source("gemv_q4_k");
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

// Every CudaGpu test starts with this: a visible skip without a device.
#define TRUENO_REQUIRE_CUDA_DEVICE()                              \
  do {                                                            \
    std::string why_;                                             \
    if (!probe(&why_)) GTEST_SKIP() << "skipped: no CUDA device: " << why_; \
  } while (0)

std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(CudaGpu, QuantizeQ8KEqualsTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = Context::get();
  std::mt19937_64 rng(test_seed());
  for (std::size_t n : {256u, 4096u, 14336u}) {
    auto x = random_vector(n, rng);
    x[7] = 0.0f;
    x[9] = 5.0f, x[200] = -5.0f;  // a tie in magnitude with opposite signs: the first wins
    std::vector<std::byte> cpu(quant_row_bytes(QuantType::Q8_K, n));
    quantize(QuantType::Q8_K, x, cpu);
    DeviceBuffer dx(n * 4);
    dx.upload(x.data(), n * 4);
    Q8Activations q(n);
    quantize_q8_k(c, dx.ptr(), q);
    c.synchronize();
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
    EXPECT_EQ(mismatches, 0u) << "n = " << n;
  }
  gpu_contract("quantize_q8_k");
}

TEST(CudaGpu, GemvQ4KMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  const YAML::Node ob = gpu_contract("gemv_q4_k")["obligations"][0];
  const double min_cos = ob["min_cosine"].as<double>(), max_nmse = ob["max_nmse"].as<double>();
  Context& c = Context::get();
  std::mt19937_64 rng(test_seed() + 1);
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 256}, {7, 512}, {64, 4096}, {1000, 4096}, {333, 14336}}) {
    const auto wf = random_vector(rows * cols, rng, 0.05f);
    const auto x = random_vector(cols, rng);
    const std::size_t rb = quant_row_bytes(QuantType::Q4_K, cols);
    std::vector<std::byte> w(rows * rb);
    for (std::size_t r = 0; r < rows; ++r)
      quantize(QuantType::Q4_K, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
    std::vector<float> want(rows), got(rows);
    quant_matvec(QuantType::Q4_K, w, rows, cols, x, want);
    DeviceBuffer dw(w.size()), dx(cols * 4), dy(rows * 4);
    dw.upload(w.data(), w.size());
    dx.upload(x.data(), cols * 4);
    Q8Activations q(cols);
    quantize_q8_k(c, dx.ptr(), q);
    gemv_q4_k(c, dw.ptr(), rows, cols, q, dy.ptr());
    c.synchronize();
    dy.download(got.data(), rows * 4);
    double dot = 0, na = 0, nb = 0, err = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      dot += double{got[i]} * want[i], na += double{got[i]} * got[i], nb += double{want[i]} * want[i];
      err += (double{got[i]} - want[i]) * (double{got[i]} - want[i]);
    }
    const double cosine = dot / std::sqrt(na * nb), nmse = err / nb;
    std::printf("gemv_q4_k %zux%zu: cosine %.9f, nmse %.3e\n", rows, cols, cosine, nmse);
    EXPECT_GE(cosine, min_cos) << rows << "x" << cols;
    EXPECT_LE(nmse, max_nmse) << rows << "x" << cols;
  }
}

TEST(CudaGpu, ShapeErrorsAreNamed) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  EXPECT_THROW(Q8Activations(100), ShapeError);
  Context& c = Context::get();
  Q8Activations q(256);
  EXPECT_THROW(gemv_q4_k(c, 0, 4, 512, q, 0), ShapeError);
}

}  // namespace
}  // namespace trueno::cuda
