// decy's translations against their CUDA originals on identical inputs (issue 17's differential check): the
// same kernel source, compiled once by NVRTC for the CUDA backend and once by decy + glslc for Vulkan, run on
// the same values, the outputs compared under the translated kernel's contract in contracts/gpu/decy.yaml
// (the CUDA output standing where the CPU reference stands in the other decy tests). Runs where both a CUDA
// device and a Vulkan device exist (the H200 with NVIDIA's Vulkan driver); a visible skip elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "trueno/ops.h"
#include "trueno/quant.h"
#include "decy_vulkan_test_support.h"
#ifdef DECY_TESTS_WITH_CUDA
#include "trueno/cuda/context.h"
#endif

namespace {

#if defined(TRUENO_TESTS_WITH_VULKAN) && defined(DECY_TESTS_WITH_CUDA)
using namespace decy::test;  // decy_vulkan_test_support.h
namespace cu = trueno::cuda;

#define DECY_REQUIRE_CUDA_DEVICE()                                                      \
  do {                                                                                  \
    std::string why_;                                                                   \
    if (!cu::probe(0, &why_)) GTEST_SKIP() << "skipped: no CUDA device: " << why_;      \
  } while (0)

cu::Context& cuda() {
  static const std::shared_ptr<cu::Context> c = cu::Context::open(0);
  return *c;
}

template <class T>
cu::DeviceBuffer to_cuda(const std::vector<T>& v) {
  cu::DeviceBuffer b(cuda(), std::max<std::size_t>(v.size() * sizeof(T), 16));
  b.upload(v.data(), v.size() * sizeof(T));
  return b;
}

template <class T>
std::vector<T> from_cuda(const cu::DeviceBuffer& b, std::size_t n) {
  cuda().synchronize();
  std::vector<T> v(n);
  b.download(v.data(), n * sizeof(T));
  return v;
}

// Runs kernel `name` of module `module` (src/cuda/kernels/<module>.cu) with CUDA's plain launch.
void run_cuda(const char* module, const char* name, unsigned grid, unsigned block, std::vector<void*> params) {
  cu::launch(cuda(), cuda().function(module, name), grid, 1, block, 1, params.data());
  cuda().synchronize();
}

std::vector<float> as_floats(const std::vector<std::uint16_t>& h) { return std::vector<float>(h.begin(), h.end()); }

// layer_ops' swiglu and add_inplace over 100,000 values (391 blocks of 256).
TEST(DecyVulkanGpu, SwigluAndAddEqualTheCudaOriginals) {
  DECY_REQUIRE_VULKAN_DEVICE();
  DECY_REQUIRE_CUDA_DEVICE();
  const int n = 100000, block = 256, groups = (n + block - 1) / block;
  const auto g = trueno::test::random_normal(n, rng(), 2.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
  const std::uint32_t spec[1] = {block};
  for (const char* kernel : {"swiglu", "add_inplace"}) {
    cu::DeviceBuffer cg = to_cuda(g), cuu = to_cuda(u);
    cu::api::CUdeviceptr pg = cg.ptr(), pu = cuu.ptr();
    int nn = n;
    run_cuda("layer_ops", kernel, groups, block, {&pg, &pu, &nn});
    const std::string name = std::string("layer_ops_") + kernel;
    Buffer bg = upload(g), bu = upload(u);
    const Pipeline& p = context().pipeline_from_spirv(name, spirv(name), 2, 4, spec);
    Recorder rec(context());
    rec.dispatch(p, {&bg, &bu}, static_cast<std::int32_t>(n), groups);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", name, download(bg, n), from_cuda<float>(cg, n), "100000 values against CUDA");
  }
}

// layer_ops' rope with and without freqs, neox and interleaved pairs, a partial rope, at position 3000.
TEST(DecyVulkanGpu, RopeEqualsTheCudaOriginal) {
  DECY_REQUIRE_VULKAN_DEVICE();
  DECY_REQUIRE_CUDA_DEVICE();
  struct Push {
    std::int32_t n_heads, hd, rope_dim;
    float theta_scale;
    std::int32_t neox;
    std::uint32_t has_freqs;
  };
  const int heads = 32, hd = 128, rope_dim = 96, half = rope_dim / 2, pos = 3000, block = 64;
  const unsigned groups = (heads * half + block - 1) / block;
  const float theta_scale = std::pow(10000.0f, -2.0f / static_cast<float>(rope_dim));
  std::vector<float> freqs(half);
  for (int i = 0; i < half; ++i) freqs[i] = 1.0f + 0.25f * static_cast<float>(i % 5);
  for (const bool with_freqs : {true, false}) {
    const int neox = with_freqs ? 0 : 1;
    const auto v = trueno::test::random_normal(static_cast<std::size_t>(heads) * hd, rng(), 1.0f);
    cu::DeviceBuffer cv = to_cuda(v), cpos = to_cuda(std::vector<std::int32_t>{pos}), cf = to_cuda(freqs);
    cu::api::CUdeviceptr pv = cv.ptr(), ppos = cpos.ptr(), pf = with_freqs ? cf.ptr() : 0;
    int nh = heads, h = hd, rd = rope_dim, nx = neox;
    float ts = theta_scale;
    run_cuda("layer_ops", "rope", groups, block, {&pv, &nh, &h, &rd, &ppos, &ts, &pf, &nx});
    Buffer bv = upload(v), bpos(context(), 4), bf = upload(freqs);
    bpos.upload(&pos, 4);
    const std::uint32_t spec[1] = {static_cast<std::uint32_t>(block)};
    const Pipeline& p = context().pipeline_from_spirv("layer_ops_rope", spirv("layer_ops_rope"), 3, sizeof(Push), spec);
    Recorder rec(context());
    const Push push = {heads, hd, rope_dim, theta_scale, neox, with_freqs ? 1u : 0u};
    rec.dispatch(p, {&bv, &bpos, &bf}, push, groups);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_rope", download(bv, v.size()), from_cuda<float>(cv, v.size()),
                                      with_freqs ? "32 heads x 128, rope 96, pos 3000, freqs, against CUDA"
                                                 : "32 heads x 128, rope 96, pos 3000, neox, against CUDA");
  }
}

// dequant_f16's seven kernels on 64 rows of 4096 (the block formats' eight-per-thread path): f16 bits equal.
TEST(DecyVulkanGpu, DequantF16EqualsTheCudaOriginals) {
  DECY_REQUIRE_VULKAN_DEVICE();
  DECY_REQUIRE_CUDA_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit || !info.storage_8bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64, 16- or 8-bit storage";
  using trueno::QuantType;
  const struct {
    QuantType type;
    const char* kernel;
  } cases[] = {{QuantType::Q4_K, "q4_k"}, {QuantType::Q5_K, "q5_k"}, {QuantType::Q6_K, "q6_k"}, {QuantType::Q8_0, "q8_0"},
               {QuantType::Q4_0, "q4_0"}, {QuantType::F32, "f32"},   {QuantType::BF16, "bf16"}};
  const std::size_t rows = 64, cols = 4096;
  const std::uint32_t block = 256, spec[1] = {block};
  for (const auto& k : cases) {
    const std::size_t rb = trueno::quant_row_bytes(k.type, cols);
    const auto wf = trueno::test::random_normal(rows * cols, rng(), 0.05f);
    std::vector<std::byte> w(rows * rb);
    for (std::size_t r = 0; r < rows; ++r)
      trueno::quantize(k.type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
    const std::string kernel = std::string("dequant_") + k.kernel + "_f16";
    cu::DeviceBuffer cw = to_cuda(std::vector<std::byte>(w.begin(), w.end())), co(cuda(), rows * cols * 2);
    cu::api::CUdeviceptr pw = cw.ptr(), po = co.ptr();
    int r = static_cast<int>(rows), c = static_cast<int>(cols);
    run_cuda("dequant_f16", kernel.c_str(), 64, block, {&pw, &po, &r, &c});
    Buffer bw(context(), (w.size() + 15) / 16 * 16), bo(context(), rows * cols * 2);
    bw.upload(w.data(), w.size());
    const std::string name = "dequant_f16_" + kernel;
    const Pipeline& p = context().pipeline_from_spirv(name, spirv(name), 2, 8, spec);
    Recorder rec(context());
    const std::int32_t push[2] = {r, c};
    rec.dispatch(p, {&bw, &bo}, push, 64);
    rec.submit();
    std::vector<std::uint16_t> got(rows * cols);
    bo.download(got.data(), got.size() * 2);
    // The CPU decoder's values too, so that a difference says which side left them.
    std::vector<float> deq(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
      trueno::dequantize(trueno::QuantRow::view(k.type, std::span(w).subspan(r * rb, rb), cols), std::span(deq).subspan(r * cols, cols));
    std::vector<std::uint16_t> want(rows * cols);
    trueno::ops::f32_to_f16(deq, want);
    const std::string op = std::string("dequant_f16_") + k.kernel;
    const auto original = from_cuda<std::uint16_t>(co, rows * cols);
    trueno::test::expect_gpu_contract("decy", op, as_floats(original), as_floats(want), "64 x 4096, CUDA against the CPU");
    trueno::test::expect_gpu_contract("decy", op, as_floats(got), as_floats(want), "64 x 4096, Vulkan against the CPU");
    trueno::test::expect_gpu_contract("decy", op, as_floats(got), as_floats(original), "64 x 4096 against CUDA");
  }
}

#else
TEST(DecyVulkanGpu, CudaOriginalsNeedBothBackends) {
  GTEST_SKIP() << "skipped: the differential check against CUDA needs the CUDA and Vulkan backends built (TRUENO_CUDA, TRUENO_VULKAN)";
}
#endif

}  // namespace
