// Third-party kernels through decy (docs/DECY.md, "Third-party kernels"): PyTorch's im2col_kernel<float>,
// col2im_kernel<float, float> and vol2col_kernel<float>, translated at build time from the headers of
// Debian's libtorch-dev (BSD-3-Clause, Facebook, Inc. and its affiliates; im2col borrowed from Caffe,
// BSD-2-Clause) that scripts/setup.sh unpacks, against CPU references written here from what the kernels
// compute (the convolution lowering: a patch of the image per column row), under contracts/gpu/decy.yaml.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "decy_vulkan_test_support.h"

namespace {

#if defined(TRUENO_TESTS_WITH_VULKAN) && defined(DECY_TORCH_HARVESTED)
using namespace decy::test;  // decy_vulkan_test_support.h

struct Conv2d {
  std::int64_t c, h, w, kh, kw, ph, pw, sh, sw, dh, dw;
  std::int64_t hc() const { return (h + 2 * ph - (dh * (kh - 1) + 1)) / sh + 1; }
  std::int64_t wc() const { return (w + 2 * pw - (dw * (kw - 1) + 1)) / sw + 1; }
  // The image element column row r = (ch, i, j), column position (y, x) reads, or -1 for padding.
  std::int64_t source(std::int64_t ch, std::int64_t i, std::int64_t j, std::int64_t y, std::int64_t x) const {
    const std::int64_t hy = y * sh - ph + i * dh, wx = x * sw - pw + j * dw;
    return hy >= 0 && wx >= 0 && hy < h && wx < w ? (ch * h + hy) * w + wx : -1;
  }
};

const Pipeline& harvested(const std::string& name, std::uint32_t push_bytes) {
  static const std::uint32_t spec[1] = {256};
  return context().pipeline_from_spirv(name, spirv(name), 2, push_bytes, spec);
}

TEST(DecyVulkanGpu, PyTorchIm2colAndCol2imMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device lacks shaderInt64 (the kernels take int64_t)";
  for (const Conv2d& g : {Conv2d{3, 11, 9, 3, 2, 1, 0, 2, 1, 1, 2}, Conv2d{2, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1}}) {
    const std::int64_t hc = g.hc(), wc = g.wc(), rows = g.c * g.kh * g.kw;
    const auto im = trueno::test::random_normal(static_cast<std::size_t>(g.c * g.h * g.w), rng(), 1.0f);
    std::vector<float> col(static_cast<std::size_t>(rows * hc * wc));
    for (std::int64_t ch = 0; ch < g.c; ++ch)
      for (std::int64_t i = 0; i < g.kh; ++i)
        for (std::int64_t j = 0; j < g.kw; ++j)
          for (std::int64_t y = 0; y < hc; ++y)
            for (std::int64_t x = 0; x < wc; ++x) {
              const std::int64_t s = g.source(ch, i, j, y, x);
              col[static_cast<std::size_t>((((ch * g.kh + i) * g.kw + j) * hc + y) * wc + x)] = s < 0 ? 0.0f : im[static_cast<std::size_t>(s)];
            }
    const std::string shape = std::to_string(g.c) + "x" + std::to_string(g.h) + "x" + std::to_string(g.w) + ", kernel " +
                              std::to_string(g.kh) + "x" + std::to_string(g.kw);
    const std::int64_t n = g.c * hc * wc;
    for (const std::uint32_t groups : {static_cast<std::uint32_t>((n + 255) / 256), 1u}) {  // 1: every thread loops (grid stride)
      Buffer bim = upload(im), bcol(context(), col.size() * 4);
      const std::int64_t push[13] = {n, g.h, g.w, g.kh, g.kw, g.ph, g.pw, g.sh, g.sw, g.dh, g.dw, hc, wc};
      Recorder rec(context());
      rec.dispatch(harvested("torch_im2col", sizeof push), {&bim, &bcol}, static_cast<const void*>(push), sizeof push, groups);
      rec.submit();
      trueno::test::expect_gpu_contract("decy", "torch_im2col", download(bcol, col.size()), col,
                                        shape + ", " + std::to_string(groups) + " workgroups");
    }
    // col2im, its adjoint: each image element the sum of the column entries that read it.
    const auto cols = trueno::test::random_normal(col.size(), rng(), 1.0f);
    std::vector<double> sum(im.size(), 0.0);
    for (std::int64_t ch = 0; ch < g.c; ++ch)
      for (std::int64_t i = 0; i < g.kh; ++i)
        for (std::int64_t j = 0; j < g.kw; ++j)
          for (std::int64_t y = 0; y < hc; ++y)
            for (std::int64_t x = 0; x < wc; ++x)
              if (const std::int64_t s = g.source(ch, i, j, y, x); s >= 0)
                sum[static_cast<std::size_t>(s)] += cols[static_cast<std::size_t>((((ch * g.kh + i) * g.kw + j) * hc + y) * wc + x)];
    const std::vector<float> want(sum.begin(), sum.end());
    Buffer bcols = upload(cols), bout(context(), im.size() * 4);
    const std::int64_t push[14] = {g.c * g.h * g.w, g.h, g.w, g.c, g.kh, g.kw, g.ph, g.pw, g.sh, g.sw, g.dh, g.dw, hc, wc};
    Recorder rec(context());
    rec.dispatch(harvested("torch_col2im", sizeof push), {&bcols, &bout}, static_cast<const void*>(push), sizeof push, static_cast<std::uint32_t>((g.c * g.h * g.w + 255) / 256));
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "torch_col2im", download(bout, im.size()), want, shape);
  }
}

TEST(DecyVulkanGpu, PyTorchVol2colMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  // channels, depth/height/width, kernel, padding, stride, dilation (t, h, w)
  const int c = 2, d = 5, h = 6, w = 7, k[3] = {2, 3, 2}, p[3] = {1, 1, 0}, s[3] = {1, 2, 1}, dl[3] = {2, 1, 1};
  const int dims[3] = {d, h, w};
  int out[3];
  for (int a = 0; a < 3; ++a) out[a] = (dims[a] + 2 * p[a] - (dl[a] * (k[a] - 1) + 1)) / s[a] + 1;
  const auto vol = trueno::test::random_normal(static_cast<std::size_t>(c * d * h * w), rng(), 1.0f);
  const int per = out[0] * out[1] * out[2];
  std::vector<float> col(static_cast<std::size_t>(c * k[0] * k[1] * k[2] * per));
  for (int ch = 0; ch < c; ++ch)
    for (int i = 0; i < k[0]; ++i)
      for (int j = 0; j < k[1]; ++j)
        for (int l = 0; l < k[2]; ++l)
          for (int t = 0; t < out[0]; ++t)
            for (int y = 0; y < out[1]; ++y)
              for (int x = 0; x < out[2]; ++x) {
                const int vt = t * s[0] - p[0] + i * dl[0], vy = y * s[1] - p[1] + j * dl[1], vx = x * s[2] - p[2] + l * dl[2];
                const bool in = vt >= 0 && vy >= 0 && vx >= 0 && vt < d && vy < h && vx < w;
                const int row = ((ch * k[0] + i) * k[1] + j) * k[2] + l;
                col[static_cast<std::size_t>(row * per + (t * out[1] + y) * out[2] + x)] = in ? vol[static_cast<std::size_t>(((ch * d + vt) * h + vy) * w + vx)] : 0.0f;
              }
  const int n = c * per;
  const int push[19] = {n, d, h, w, k[0], k[1], k[2], p[0], p[1], p[2], s[0], s[1], s[2], dl[0], dl[1], dl[2], out[0], out[1], out[2]};
  Buffer bvol = upload(vol), bcol(context(), col.size() * 4);
  Recorder rec(context());
  // One iteration per thread, as PyTorch launches it (GET_BLOCKS(n)): the kernel advances its pointer
  // parameters inside the grid-stride loop, so a thread's second iteration would start from the first's.
  rec.dispatch(harvested("torch_vol2col", sizeof push), {&bvol, &bcol}, static_cast<const void*>(push), sizeof push, static_cast<std::uint32_t>((n + 255) / 256));
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "torch_vol2col", download(bcol, col.size()), col, "2x5x6x7, kernel 2x3x2");
}

#elif defined(TRUENO_TESTS_WITH_VULKAN)
TEST(DecyVulkanGpu, PyTorchKernelsNeedLibtorchDevHeaders) {
  GTEST_SKIP() << "skipped: libtorch-dev's headers were not found at configure time (scripts/setup.sh unpacks them into build/harvest/libtorch-dev)";
}
#else
TEST(DecyVulkanGpu, ThirdPartyNeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
