// decy end to end: the kernels of testdata/kernels.cu, translated to GLSL and compiled to SPIR-V at build
// time (decy/CMakeLists.txt), run on a Vulkan device (lavapipe in CI) against a CPU reference under
// contracts/gpu/decy.yaml. A visible skip without a Vulkan device or without the Vulkan backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "mixed_ops_ref.h"
#include "support/gpu_contract.h"
#include "trueno/ops.h"
#include "decy_vulkan_test_support.h"

namespace {

#ifdef TRUENO_TESTS_WITH_VULKAN
using namespace decy::test;  // decy_vulkan_test_support.h

struct Push2 {
  std::int32_t n;
  float f;
};

TEST(DecyVulkanGpu, AddRowsBiasMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int rows = 5, n = 300, block = 64;
  auto y = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  const auto b = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu = y;
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < n; ++i) cpu[static_cast<std::size_t>(r) * n + i] += b[i];
  Buffer by = upload(y), bb = upload(b);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("add_rows_bias", spirv("add_rows_bias"), 2, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&by, &bb}, push, (n + block - 1) / block, rows);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "add_rows_bias", download(by, y.size()), cpu, "5 x 300");
}

TEST(DecyVulkanGpu, SwigluMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int n = 1000, block = 128, groups = 3;  // fewer threads than values: the grid-stride loop
  const auto g = trueno::test::random_normal(n, rng(), 2.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu(n);
  for (int i = 0; i < n; ++i) cpu[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  Buffer bg = upload(g), bu = upload(u), bo(context(), n * 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("swiglu", spirv("swiglu"), 3, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&bg, &bu, &bo}, push, groups);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "swiglu", download(bo, n), cpu, "1000");
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

TEST(DecyVulkanGpu, RowSumThroughSharedMemoryMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int rows = 7, n = 1000, block = 256;  // block = ROW_SUM_THREADS, the shared array's size
  const auto x = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  Buffer bx = upload(x), bo(context(), rows * 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("row_sum_shared", spirv("row_sum_shared"), 2, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&bx, &bo}, push, rows);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "row_sum_shared", download(bo, rows), row_sums(x, rows, n, 1.0f), "7 x 1000");
}

TEST(DecyVulkanGpu, RowSumThroughWarpShufflesMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const std::uint32_t sg = context().info().subgroup_size;
  // The kernel's second stage sums the per-warp values with one warp: at most warpSize warps per block
  // (always true in CUDA, where 1024 threads are 32 warps of 32; on lavapipe's subgroups of 8: 64 threads).
  if (sg == 0) GTEST_SKIP() << "skipped: the device reports no subgroup size";
  const int rows = 6, n = 777, block = static_cast<int>(std::min(256u, sg * sg));
  const auto x = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  Buffer bx = upload(x), bo(context(), rows * 4);
  const std::uint32_t spec[1] = {static_cast<std::uint32_t>(block)};
  const Pipeline& p = context().pipeline_from_spirv("row_sum_warp", spirv("row_sum_warp"), 2, 8, spec);
  Recorder rec(context());
  const Push2 push{n, 0.5f};
  rec.dispatch(p, {&bx, &bo}, push, rows);
  rec.submit();
  std::printf("subgroup size %u, block %d\n", sg, block);
  trueno::test::expect_gpu_contract("decy", "row_sum_warp", download(bo, rows), row_sums(x, rows, n, 0.5f), "6 x 777");
}
TEST(DecyVulkanGpu, SignedDivisionAndRemainderAreCs) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int n = 400, block = 64;
  std::vector<std::int32_t> x(n);
  std::uniform_int_distribution<std::int32_t> d(-100000, 100000);
  for (auto& v : x) v = d(rng());
  for (const int m : {7, -7}) {
    std::vector<float> want, got;
    for (int i = 0; i < n; ++i) want.push_back(static_cast<float>(x[i] / m)), want.push_back(static_cast<float>(x[i] % m));
    Buffer bx(context(), n * 4), bq(context(), n * 4), br(context(), n * 4);
    bx.upload(x.data(), n * 4);
    const std::uint32_t spec[1] = {block};
    const Pipeline& p = context().pipeline_from_spirv("div_rem", spirv("div_rem"), 3, 8, spec);
    Recorder rec(context());
    const std::int32_t push[2] = {m, n};
    rec.dispatch(p, {&bx, &bq, &br}, push, (n + block - 1) / block);
    rec.submit();
    std::vector<std::int32_t> q(n), r(n);
    bq.download(q.data(), n * 4), br.download(r.data(), n * 4);
    for (int i = 0; i < n; ++i) got.push_back(static_cast<float>(q[i])), got.push_back(static_cast<float>(r[i]));
    trueno::test::expect_gpu_contract("decy", "div_rem", got, want, m > 0 ? "m = 7" : "m = -7");  // |values| < 2^24: exact floats
  }
}

// A do-while, ?:, unsigned negation, shifts by an int, >>=, a helper reading threadIdx through a view.
// Note [do-while on llvmpipe]: Mesa 22.3.6's llvmpipe (lavapipe) gets v wrong after this kernel's do-while
// when the SPIR-V is glslc -O's (1600-odd of 4000 values differ); the same SPIR-V is right on SwiftShader,
// the unoptimized SPIR-V is right on llvmpipe, and so is the loop written as while (true) { ...; if (!c)
// break; }. A driver bug, not decy's translation: skipped there, with the reason.
TEST(DecyVulkanGpu, MixedIntegerOpsAndControlFlowAreCs) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (const std::string d = context().info().describe(); d.find("llvmpipe") != std::string::npos && d.find("Mesa 22.") != std::string::npos)
    GTEST_SKIP() << "skipped: Mesa 22's llvmpipe miscompiles the optimized do-while (Note [do-while on llvmpipe]): " << d;
  const int n = 1000, block = 64;  // a multiple of 4: mix_bits' p[threadIdx.x % 4] is x[i]
  std::vector<std::uint32_t> x(n), y(n);
  std::vector<std::int32_t> z(n);
  std::uniform_int_distribution<std::uint32_t> d;
  for (auto& v : x) v = d(rng());
  std::vector<std::uint32_t> want_y;
  std::vector<std::int32_t> want_z;
  decy::test::mixed_ops_ref(x, want_y, want_z);
  Buffer bx(context(), n * 4), by(context(), n * 4), bz(context(), n * 4);
  bx.upload(x.data(), n * 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("mixed_ops", spirv("mixed_ops"), 3, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&bx, &by, &bz}, push, (n + block - 1) / block);
  rec.submit();
  by.download(y.data(), n * 4), bz.download(z.data(), n * 4);
  trueno::test::expect_gpu_contract("decy", "mixed_ops", decy::test::halves(y, z), decy::test::halves(want_y, want_z), "1000");
}

// The project's own CUDA kernels (src/cuda/kernels/layer_ops.cu) through decy, against the CPU ops.
TEST(DecyVulkanGpu, ProjectSwigluAndAddMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int n = 1000, block = 256, groups = (n + block - 1) / block;
  const auto g = trueno::test::random_normal(n, rng(), 2.0f), u = trueno::test::random_normal(n, rng(), 1.0f);
  const std::uint32_t spec[1] = {block};
  const std::int32_t push = n;
  std::vector<float> cpu(n);
  {
    trueno::ops::swiglu(g, u, cpu);
    Buffer bg = upload(g), bu = upload(u);
    const Pipeline& p = context().pipeline_from_spirv("layer_ops_swiglu", spirv("layer_ops_swiglu"), 2, 4, spec);
    Recorder rec(context());
    rec.dispatch(p, {&bg, &bu}, push, groups);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_swiglu", download(bg, n), cpu, "1000");
  }
  {  // swiglu_v4: four values per thread over vec4 buffers (n = 1000 = 250 x 4)
    Buffer bg = upload(g), bu = upload(u);
    const Pipeline& p = context().pipeline_from_spirv("layer_ops_swiglu_v4", spirv("layer_ops_swiglu_v4"), 2, 4, spec);
    Recorder rec(context());
    rec.dispatch(p, {&bg, &bu}, std::int32_t{n / 4}, (n / 4 + block - 1) / block);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_swiglu_v4", download(bg, n), cpu, "1000 as 250 vec4");
  }
  {
    trueno::ops::add(g, u, cpu);
    Buffer bx = upload(g), by = upload(u);
    const Pipeline& p = context().pipeline_from_spirv("layer_ops_add_inplace", spirv("layer_ops_add_inplace"), 2, 4, spec);
    Recorder rec(context());
    rec.dispatch(p, {&bx, &by}, push, groups);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_add_inplace", download(bx, n), cpu, "1000");
  }
}
// prefill_ops.cu's add_rows: a 64-bit row offset (u64), so the device needs shaderInt64.
TEST(DecyVulkanGpu, ProjectAddRowsMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device has no shaderInt64 (add_rows indexes with u64)";
  const int rows = 4, n = 333, block = 64;
  const auto y = trueno::test::random_normal(static_cast<std::size_t>(rows) * n, rng(), 1.0f);
  const auto b = trueno::test::random_normal(n, rng(), 1.0f);
  std::vector<float> cpu(y.size());
  for (int r = 0; r < rows; ++r)
    trueno::ops::add(std::span(y).subspan(static_cast<std::size_t>(r) * n, n), b, std::span(cpu).subspan(static_cast<std::size_t>(r) * n, n));
  Buffer by = upload(y), bb = upload(b);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("prefill_ops_add_rows", spirv("prefill_ops_add_rows"), 2, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&by, &bb}, push, (n + block - 1) / block, rows);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "prefill_ops_add_rows", download(by, y.size()), cpu, "4 x 333");
}
// layer_ops.cu's attention_combine (through attention.cuh's attention_combine_body, a helper taking two
// buffers: Note [Helpers with pointer parameters]): per head, the sum of the chunks' partial outputs.
TEST(DecyVulkanGpu, ProjectAttentionCombineMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device has no shaderInt64 (attention_combine indexes with u64)";
  const int heads = 3, hd = 40, max_chunks = 5, pos = 200, chunk = 64, n_chunks = (pos + 1 + chunk - 1) / chunk, block = 32;
  const auto o = trueno::test::random_normal(static_cast<std::size_t>(heads) * max_chunks * hd, rng(), 1.0f);
  std::vector<float> cpu(static_cast<std::size_t>(heads) * hd);
  for (int h = 0; h < heads; ++h)
    for (int d = 0; d < hd; ++d) {
      float acc = 0.0f;  // the kernel's order: exact
      for (int c = 0; c < n_chunks; ++c) acc += o[(static_cast<std::size_t>(h) * max_chunks + c) * hd + d];
      cpu[static_cast<std::size_t>(h) * hd + d] = acc;
    }
  const std::vector<std::int32_t> posv = {pos};
  Buffer bo = upload(o), bpos(context(), 4), bout(context(), cpu.size() * 4);
  bpos.upload(posv.data(), 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("layer_ops_attention_combine", spirv("layer_ops_attention_combine"), 3, 8, spec);
  Recorder rec(context());
  const std::int32_t push[2] = {hd, max_chunks};
  rec.dispatch(p, {&bo, &bpos, &bout}, push, heads);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "layer_ops_attention_combine", download(bout, cpu.size()), cpu, "3 heads x 40, 4 chunks");
}
// layer_ops.cu's kv_append and prefill_ops.cu's cast_f16: f32 -> f16 bits in u16 buffers (the prelude's
// cvt.rn.f16.f32 asm: Note [PTX idioms]), against trueno::ops::f32_to_f16 (round to nearest even).
TEST(DecyVulkanGpu, ProjectF16StoresMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  const int n = 515, pos = 3, block = 64;
  auto x = trueno::test::random_normal(n, rng(), 3.0f);
  x[0] = 65504.0f, x[1] = 1e-6f, x[2] = -1e-8f, x[3] = 1e6f;  // largest f16, a subnormal, underflow, overflow
  std::vector<std::uint16_t> want(n);
  trueno::ops::f32_to_f16(x, want);
  const std::uint32_t spec[1] = {block};
  auto halves = [](const Buffer& b, std::size_t count, std::size_t first) {
    std::vector<std::uint16_t> h(count + first);
    b.download(h.data(), h.size() * 2);
    return std::vector<float>(h.begin() + static_cast<std::ptrdiff_t>(first), h.end());  // the bits as exact floats
  };
  const std::vector<float> want_bits(want.begin(), want.end());
  {
    const std::vector<std::int32_t> posv = {pos};
    Buffer bk = upload(x), bv = upload(x), bkc(context(), (pos + 1) * n * 2 + 2), bvc(context(), (pos + 1) * n * 2 + 2), bpos(context(), 4);
    bpos.upload(posv.data(), 4);
    const Pipeline& p = context().pipeline_from_spirv("layer_ops_kv_append", spirv("layer_ops_kv_append"), 5, 4, spec);
    Recorder rec(context());
    const std::int32_t push = n;
    rec.dispatch(p, {&bk, &bv, &bkc, &bvc, &bpos}, push, (n + block - 1) / block);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_kv_append", halves(bkc, n, static_cast<std::size_t>(pos) * n), want_bits, "k row 3");
    trueno::test::expect_gpu_contract("decy", "layer_ops_kv_append", halves(bvc, n, static_cast<std::size_t>(pos) * n), want_bits, "v row 3");
  }
  {
    Buffer bx = upload(x), by(context(), n * 2 + 2);
    const Pipeline& p = context().pipeline_from_spirv("prefill_ops_cast_f16", spirv("prefill_ops_cast_f16"), 2, 8, spec);
    Recorder rec(context());
    const std::uint64_t push = n;
    rec.dispatch(p, {&bx, &by}, push, 3);  // fewer threads than values: the grid-stride loop
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "prefill_ops_cast_f16", halves(by, n, 0), want_bits, "515");
  }
}

// testdata's bytes_8bit: i8 and u8 buffers read and written (GL_EXT_shader_8bit_storage), C's truncation
// on the conversion to u8 and i8, __float2int_rn. Scales are multiples of 1/8, so every product is exact
// and a fused multiply-add changes nothing: bit-exact.
TEST(DecyVulkanGpu, EightBitBuffersMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().storage_8bit) GTEST_SKIP() << "skipped: the device has no storageBuffer8BitAccess";
  const int n = 999, block = 64;
  std::uniform_int_distribution<int> byte(0, 255), scale(-16, 16);
  std::vector<std::int8_t> q(n);
  std::vector<std::uint8_t> w((n + 1) / 2);
  std::vector<float> d((n + 31) / 32);
  for (auto& v : q) v = static_cast<std::int8_t>(byte(rng()) - 128);
  for (auto& v : w) v = static_cast<std::uint8_t>(byte(rng()));
  for (auto& v : d) v = static_cast<float>(scale(rng())) / 8.0f;
  std::vector<float> out(n), qo(n), wo(w.size());
  for (int i = 0; i < n; ++i) {
    const int nib = i % 2 == 0 ? w[i / 2] & 0xF : w[i / 2] >> 4;
    out[i] = d[i / 32] * static_cast<float>(q[i]) + static_cast<float>(nib);
    qo[i] = static_cast<float>(static_cast<std::int8_t>(std::max(-128, std::min(127, static_cast<int>(std::nearbyint(out[i] * 3.0f))))));
  }
  for (std::size_t j = 0; j < w.size(); ++j) wo[j] = static_cast<float>(static_cast<std::uint8_t>(w[j] + 17));
  Buffer bq(context(), n), bw(context(), w.size()), bd = upload(d), bout(context(), n * 4), bqo(context(), n), bwo(context(), w.size());
  bq.upload(q.data(), n), bw.upload(w.data(), w.size());
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("bytes_8bit", spirv("bytes_8bit"), 6, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&bq, &bw, &bd, &bout, &bqo, &bwo}, push, (n + block - 1) / block);
  rec.submit();
  std::vector<std::int8_t> gq(n);
  std::vector<std::uint8_t> gw(w.size());
  bqo.download(gq.data(), n), bwo.download(gw.data(), w.size());
  trueno::test::expect_gpu_contract("decy", "bytes_8bit", download(bout, n), out, "999 f32");
  trueno::test::expect_gpu_contract("decy", "bytes_8bit", std::vector<float>(gq.begin(), gq.end()), qo, "999 i8");
  trueno::test::expect_gpu_contract("decy", "bytes_8bit", std::vector<float>(gw.begin(), gw.end()), wo, "500 u8 (every other byte written)");
}

// testdata's vectors (Note [Vector types]): float4 loads through an alias of the buffer when the row is
// 16-byte aligned (n = 12) and scalar loads when not (n = 7), a uint4 buffer, make_uint4 stored into a u16
// buffer. Integer-valued inputs: every sum exact in any order, with or without fused multiply-adds.
TEST(DecyVulkanGpu, VectorTypesMatchTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  const int rows = 37, block = 16;
  std::uniform_int_distribution<int> small(-8, 8);
  std::uniform_int_distribution<std::uint32_t> word;
  for (const int n : {12, 7}) {
    std::vector<float> x(static_cast<std::size_t>(rows) * n), sums(rows);
    for (auto& v : x) v = static_cast<float>(small(rng()));
    std::vector<std::uint32_t> u(4 * rows), h(4 * rows);
    for (auto& v : u) v = word(rng());
    for (int r = 0; r < rows; ++r) {
      for (int i = 0; i < n; ++i) sums[r] += x[static_cast<std::size_t>(r) * n + i] * x[static_cast<std::size_t>(r) * n + i];
      const std::uint32_t* w = &u[4 * r];
      const std::uint32_t o[4] = {w[1], w[0], w[3] ^ w[2], w[2] + 1u};
      std::memcpy(&h[4 * r], o, 16);
    }
    Buffer bx = upload(x), bu(context(), u.size() * 4), bs(context(), rows * 4), bh(context(), h.size() * 4);
    bu.upload(u.data(), u.size() * 4);
    const std::uint32_t spec[1] = {block};
    const Pipeline& p = context().pipeline_from_spirv("vectors", spirv("vectors"), 4, 8, spec);
    Recorder rec(context());
    const std::int32_t push[2] = {rows, n};
    rec.dispatch(p, {&bx, &bu, &bs, &bh}, push, (rows + block - 1) / block);
    rec.submit();
    std::vector<std::uint32_t> gh(h.size());
    bh.download(gh.data(), gh.size() * 4);
    const std::string what = n == 12 ? "n = 12 (float4 loads)" : "n = 7 (scalar loads)";
    trueno::test::expect_gpu_contract("decy", "vectors", download(bs, rows), sums, what + ": sums");
    std::vector<float> want_lo(h.size()), got_lo(h.size()), want_hi(h.size()), got_hi(h.size());  // exact as 16-bit halves
    for (std::size_t i = 0; i < h.size(); ++i) {
      want_lo[i] = static_cast<float>(h[i] & 0xffffu), want_hi[i] = static_cast<float>(h[i] >> 16);
      got_lo[i] = static_cast<float>(gh[i] & 0xffffu), got_hi[i] = static_cast<float>(gh[i] >> 16);
    }
    trueno::test::expect_gpu_contract("decy", "vectors", got_lo, want_lo, what + ": uint4 stores, low halves");
    trueno::test::expect_gpu_contract("decy", "vectors", got_hi, want_hi, what + ": uint4 stores, high halves");
  }
}

// bench_read.cu's bench_read (a uint4 buffer, a u64 grid-stride loop): each thread xors its 16-byte loads and
// writes out[block] only when the result equals `never`, set here to one thread's value: out matches the
// CPU's run of the same threads (0xffffffff where no thread of the block matched).
TEST(DecyVulkanGpu, ProjectBenchReadMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device has no shaderInt64 (bench_read's n is u64)";
  const int blocks = 3, threads = 256;
  const std::uint64_t n = 2000;
  std::uniform_int_distribution<std::uint32_t> word;
  std::vector<std::uint32_t> p(4 * n);
  for (auto& v : p) v = word(rng());
  std::vector<std::uint32_t> xs(static_cast<std::size_t>(blocks) * threads, 0);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      for (std::uint64_t i = static_cast<std::uint64_t>(b) * 256 + t; i < n; i += static_cast<std::uint64_t>(blocks) * 256)
        xs[b * threads + t] ^= p[4 * i] ^ p[4 * i + 1] ^ p[4 * i + 2] ^ p[4 * i + 3];
  const std::uint32_t never = xs[1 * threads + 5];
  const std::vector<std::uint32_t> init(blocks, 0xffffffffu);
  Buffer bp(context(), p.size() * 4), bo(context(), blocks * 4);
  bp.upload(p.data(), p.size() * 4), bo.upload(init.data(), blocks * 4);
  struct Push {
    std::uint64_t n;
    std::uint32_t never, pad;
  };
  const std::uint32_t spec[1] = {threads};
  const Pipeline& pl = context().pipeline_from_spirv("bench_read_bench_read", spirv("bench_read_bench_read"), 2, sizeof(Push), spec);
  Recorder rec(context());
  const Push push = {n, never, 0};
  rec.dispatch(pl, {&bp, &bo}, push, blocks);
  rec.submit();
  std::vector<std::uint32_t> got(blocks);
  bo.download(got.data(), blocks * 4);
  std::vector<float> got_lo(blocks), got_hi(blocks), want_lo(blocks), want_hi(blocks);  // 16-bit halves: exact in f32
  for (int b = 0; b < blocks; ++b) {
    std::uint32_t o = 0xffffffffu;
    for (int t = 0; t < threads; ++t)
      if (xs[b * threads + t] == never) o = never;
    want_lo[b] = static_cast<float>(o & 0xffffu), want_hi[b] = static_cast<float>(o >> 16);
    got_lo[b] = static_cast<float>(got[b] & 0xffffu), got_hi[b] = static_cast<float>(got[b] >> 16);
  }
  trueno::test::expect_gpu_contract("decy", "bench_read_bench_read", got_lo, want_lo, "3 blocks, low halves");
  trueno::test::expect_gpu_contract("decy", "bench_read_bench_read", got_hi, want_hi, "3 blocks, high halves");
}

// testdata's block_any: __syncthreads_or twice in a row (the shared flag reset between calls).
TEST(DecyVulkanGpu, SyncthreadsOrMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int n = 500, block = 64, blocks = (n + block - 1) / block + 1;  // one block past n: index n + 1
  std::vector<float> x(n, 1.0f);
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int j = 0; j < 3; ++j) x[pick(rng())] = -1.0f;
  std::vector<float> want(2 * blocks);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < block; ++t) {
      const int i = b * block + t;
      if (i < n && x[i] < 0.0f) want[2 * b] = 1.0f;
      if (i == n + 1) want[2 * b + 1] = 1.0f;
    }
  Buffer bx = upload(x), bo(context(), 2 * blocks * 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("block_any", spirv("block_any"), 2, 4, spec);
  Recorder rec(context());
  const std::int32_t push = n;
  rec.dispatch(p, {&bx, &bo}, push, blocks);
  rec.submit();
  std::vector<std::int32_t> got(2 * blocks);
  bo.download(got.data(), got.size() * 4);
  trueno::test::expect_gpu_contract("decy", "block_any", std::vector<float>(got.begin(), got.end()), want, "9 blocks of 64");
}

// layer_ops.cu's rope (the prelude's rope_sincos: `freqs != nullptr`, sincosf; Note [Optional buffers],
// Note [sincosf]), with freqs and without (a dummy buffer bound, decy_has_freqs 0), against the CPU: the
// angle built the same way in f32, sin and cos in f64.
TEST(DecyVulkanGpu, ProjectRopeWithAndWithoutFreqsMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  struct Push {
    std::int32_t n_heads, hd, rope_dim;
    float theta_scale;
    std::int32_t neox;
    std::uint32_t has_freqs;
  };
  const int heads = 4, hd = 64, rope_dim = 48, half = rope_dim / 2, pos = 1000, block = 32;
  const float theta_scale = std::pow(10000.0f, -2.0f / static_cast<float>(rope_dim));
  std::vector<float> freqs(half);
  for (int i = 0; i < half; ++i) freqs[i] = 1.0f + 0.25f * static_cast<float>(i % 5);
  for (const bool with_freqs : {true, false}) {
    const int neox = with_freqs ? 1 : 0;
    const auto v = trueno::test::random_normal(static_cast<std::size_t>(heads) * hd, rng(), 1.0f);
    std::vector<float> cpu = v;
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < half; ++i) {
        float theta = static_cast<float>(pos);
        for (int k = 0; k < i; ++k) theta *= theta_scale;
        if (with_freqs) theta /= freqs[i];
        const float sn = static_cast<float>(std::sin(static_cast<double>(theta))), cs = static_cast<float>(std::cos(static_cast<double>(theta)));
        const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
        float* row = cpu.data() + static_cast<std::size_t>(h) * hd;
        const float x0 = row[a], x1 = row[b];
        row[a] = x0 * cs - x1 * sn, row[b] = x0 * sn + x1 * cs;
      }
    const std::vector<std::int32_t> posv = {pos};
    Buffer bv = upload(v), bpos(context(), 4), bf = upload(with_freqs ? freqs : std::vector<float>{0.0f});
    bpos.upload(posv.data(), 4);
    const std::uint32_t spec[1] = {block};
    const Pipeline& p = context().pipeline_from_spirv("layer_ops_rope", spirv("layer_ops_rope"), 3, sizeof(Push), spec);
    Recorder rec(context());
    const Push push = {heads, hd, rope_dim, theta_scale, neox, with_freqs ? 1u : 0u};
    rec.dispatch(p, {&bv, &bpos, &bf}, push, (heads * half + block - 1) / block);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "layer_ops_rope", download(bv, v.size()), cpu,
                                      with_freqs ? "4 heads x 64, pos 1000, freqs, neox" : "4 heads x 64, pos 1000, no freqs");
  }
}

// The CPU's rope of one row of heads (layer_ops.cu's rope, rope_sincos): pairs (2i, 2i + 1) or (i, i + half).
void rope_row(float* row, int heads, int hd, int rope_dim, int pos, float theta_scale, const float* freqs, int neox) {
  const int half = rope_dim / 2;
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < half; ++i) {
      float theta = static_cast<float>(pos);
      for (int k = 0; k < i; ++k) theta *= theta_scale;
      if (freqs != nullptr) theta /= freqs[i];
      const float sn = static_cast<float>(std::sin(static_cast<double>(theta))), cs = static_cast<float>(std::cos(static_cast<double>(theta)));
      const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
      float* v = row + static_cast<std::size_t>(h) * hd;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * cs - x1 * sn, v[b] = x0 * sn + x1 * cs;
    }
}

std::vector<float> halves_as_f32(const Buffer& b, std::size_t first, std::size_t count) {
  std::vector<std::uint16_t> h(first + count);
  b.download(h.data(), h.size() * 2);
  std::vector<float> out(count);
  trueno::ops::f16_to_f32(std::span<const std::uint16_t>(h).subspan(first), out);
  return out;
}

// fused_ops.cu's rope_append and prefill_ops.cu's rope_append_rows (Note [Views chosen by ?:]: `(is_k ? kv :
// qv) + h * hd` picks q's or k's buffer per thread; rope_dim < hd, so some dimensions are copied unrotated)
// against the CPU's rope and f32 -> f16.
TEST(DecyVulkanGpu, ProjectRopeAppendMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const auto& info = context().info();
  if (!info.int64 || !info.storage_16bit) GTEST_SKIP() << "skipped: the device lacks shaderInt64 or 16-bit storage";
  const int n_head = 4, n_kv = 2, hd = 32, rope_dim = 24, half = rope_dim / 2, block = 64;
  const int q_row = n_head * hd, kv_row = n_kv * hd;
  const float theta_scale = std::pow(10000.0f, -2.0f / static_cast<float>(rope_dim));
  std::vector<float> freqs(half);
  for (int i = 0; i < half; ++i) freqs[i] = 1.0f + 0.5f * static_cast<float>(i % 3);
  const std::uint32_t spec[1] = {block};
  {  // rope_append: one token at *pos, no freqs, pairs (2i, 2i + 1)
    const int pos = 77, neox = 0;
    const auto q = trueno::test::random_normal(q_row, rng(), 1.0f), k = trueno::test::random_normal(kv_row, rng(), 1.0f),
               v = trueno::test::random_normal(kv_row, rng(), 1.0f);
    std::vector<float> cq = q, ck = k;
    rope_row(cq.data(), n_head, hd, rope_dim, pos, theta_scale, nullptr, neox);
    rope_row(ck.data(), n_kv, hd, rope_dim, pos, theta_scale, nullptr, neox);
    std::vector<std::uint16_t> hk(kv_row), hv(kv_row);
    trueno::ops::f32_to_f16(ck, hk), trueno::ops::f32_to_f16(v, hv);
    std::vector<float> want_k(kv_row), want_v(kv_row);
    trueno::ops::f16_to_f32(hk, want_k), trueno::ops::f16_to_f32(hv, want_v);
    const std::vector<std::int32_t> posv = {pos};
    Buffer bq = upload(q), bk = upload(k), bv = upload(v), bpos(context(), 4), bf = upload(std::vector<float>{0.0f}),
           bkc(context(), (pos + 1) * kv_row * 2), bvc(context(), (pos + 1) * kv_row * 2);
    bpos.upload(posv.data(), 4);
    struct Push {
      std::int32_t n_head, n_kv, hd, rope_dim;
      float theta_scale;
      std::int32_t neox;
      std::uint32_t has_freqs;
    };
    const Pipeline& p = context().pipeline_from_spirv("fused_ops_rope_append", spirv("fused_ops_rope_append"), 7, sizeof(Push), spec);
    Recorder rec(context());
    const Push push = {n_head, n_kv, hd, rope_dim, theta_scale, neox, 0u};
    rec.dispatch(p, {&bq, &bk, &bv, &bpos, &bf, &bkc, &bvc}, push, (n_head * half + n_kv * half + kv_row + block - 1) / block);
    rec.submit();
    trueno::test::expect_gpu_contract("decy", "rope_append", download(bq, q_row), cq, "rope_append q (in place)");
    trueno::test::expect_gpu_contract("decy", "rope_append", download(bk, kv_row), ck, "rope_append k (in place)");
    trueno::test::expect_gpu_contract("decy", "rope_append", halves_as_f32(bkc, static_cast<std::size_t>(pos) * kv_row, kv_row), want_k, "rope_append k cache");
    trueno::test::expect_gpu_contract("decy", "rope_append", halves_as_f32(bvc, static_cast<std::size_t>(pos) * kv_row, kv_row), want_v, "rope_append v cache");
  }
  {  // rope_append_rows: 3 tokens from pos0, freqs, neox pairs; q as f16 rows
    const int tokens = 3, pos0 = 40, neox = 1;
    const auto q = trueno::test::random_normal(static_cast<std::size_t>(tokens) * q_row, rng(), 1.0f),
               k = trueno::test::random_normal(static_cast<std::size_t>(tokens) * kv_row, rng(), 1.0f),
               v = trueno::test::random_normal(static_cast<std::size_t>(tokens) * kv_row, rng(), 1.0f);
    std::vector<float> cq = q, ck = k;
    for (int t = 0; t < tokens; ++t) {
      rope_row(cq.data() + static_cast<std::size_t>(t) * q_row, n_head, hd, rope_dim, pos0 + t, theta_scale, freqs.data(), neox);
      rope_row(ck.data() + static_cast<std::size_t>(t) * kv_row, n_kv, hd, rope_dim, pos0 + t, theta_scale, freqs.data(), neox);
    }
    auto through_f16 = [](const std::vector<float>& x) {
      std::vector<std::uint16_t> h(x.size());
      std::vector<float> out(x.size());
      trueno::ops::f32_to_f16(x, h), trueno::ops::f16_to_f32(h, out);
      return out;
    };
    Buffer bq = upload(q), bk = upload(k), bv = upload(v), bf = upload(freqs), bq16(context(), q.size() * 2),
           bkc(context(), (pos0 + tokens) * kv_row * 2), bvc(context(), (pos0 + tokens) * kv_row * 2);
    struct Push {
      std::int32_t n_head, n_kv, hd, rope_dim, pos0;
      float theta_scale;
      std::int32_t neox;
      std::uint32_t has_freqs;
    };
    const Pipeline& p = context().pipeline_from_spirv("prefill_ops_rope_append_rows", spirv("prefill_ops_rope_append_rows"), 7, sizeof(Push), spec);
    Recorder rec(context());
    const Push push = {n_head, n_kv, hd, rope_dim, pos0, theta_scale, neox, 1u};
    rec.dispatch(p, {&bq, &bk, &bv, &bf, &bq16, &bkc, &bvc}, push, tokens);  // a workgroup per token
    rec.submit();
    const std::size_t first = static_cast<std::size_t>(pos0) * kv_row, n_kvs = static_cast<std::size_t>(tokens) * kv_row;
    trueno::test::expect_gpu_contract("decy", "rope_append", halves_as_f32(bq16, 0, q.size()), through_f16(cq), "rope_append_rows q16");
    trueno::test::expect_gpu_contract("decy", "rope_append", halves_as_f32(bkc, first, n_kvs), through_f16(ck), "rope_append_rows k cache");
    trueno::test::expect_gpu_contract("decy", "rope_append", halves_as_f32(bvc, first, n_kvs), through_f16(v), "rope_append_rows v cache");
  }
}

// sample_ops.cu's top_k_tiles, one tile (its last round): `in == nullptr` (Note [Optional buffers]), a
// __shared__ array passed to the bitonic sort helper, __syncthreads_or of the NaN flag, and the k best as
// TopKCandidate structs written through a cast of the int result buffer (Note [Structs of scalars]). The
// CPU: largest logit first, the lower id among equals, NaN never chosen and flagged.
TEST(DecyVulkanGpu, ProjectTopKTilesMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  if (!context().info().int64) GTEST_SKIP() << "skipped: the device has no shaderInt64 (top_k_tiles sorts u64 keys)";
  const int n = 1500, k = 10, block = 256;
  auto x = trueno::test::random_normal(n, rng(), 1.0f);
  x[100] = x[7] = 9.0f;  // a tie: id 7 first
  x[3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<int> ids;
  for (int i = 0; i < n; ++i)
    if (!std::isnan(x[i])) ids.push_back(i);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return x[a] > x[b]; });
  std::vector<float> want = {1.0f, static_cast<float>(k)};
  for (int i = 0; i < k; ++i) want.push_back(x[ids[i]]), want.push_back(static_cast<float>(ids[i]));
  const std::vector<std::int32_t> zeros(2 + 2 * k, 0);
  Buffer bx = upload(x), bin(context(), 8), bout(context(), 8), bres(context(), zeros.size() * 4);
  bres.upload(zeros.data(), zeros.size() * 4);
  const std::int32_t push[3] = {n, k, 0};  // n, k, decy_has_in = 0: the first round reads x
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("sample_ops_top_k_tiles", spirv("sample_ops_top_k_tiles"), 4, sizeof push, spec);
  Recorder rec(context());
  rec.dispatch(p, {&bx, &bin, &bout, &bres}, push, 1);
  rec.submit();
  std::vector<std::int32_t> got(zeros.size());
  bres.download(got.data(), got.size() * 4);
  std::vector<float> gotf = {static_cast<float>(got[0]), static_cast<float>(got[1])};
  for (int i = 0; i < k; ++i) {
    float logit;
    std::memcpy(&logit, &got[2 + 2 * i], 4);
    gotf.push_back(logit), gotf.push_back(static_cast<float>(got[3 + 2 * i]));
  }
  trueno::test::expect_gpu_contract("decy", "sample_ops_top_k_tiles", gotf, want, "1500 logits (a NaN, a tie), k = 10");
}

// sample_ops.cu's repeat_penalty (__fdiv_rn, __fmul_rn: Note [Correctly rounded intrinsics]) against the
// CPU's IEEE f32 division and multiplication, on distinct ids.
TEST(DecyVulkanGpu, ProjectRepeatPenaltyMatchesTheCpu) {
  DECY_REQUIRE_VULKAN_DEVICE();
  const int n = 1000, n_ids = 300, block = 64;
  const float penalty = 1.3f;
  const auto x = trueno::test::random_normal(n, rng(), 4.0f);
  std::vector<std::int32_t> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = i;
  std::shuffle(ids.begin(), ids.end(), rng());
  ids.resize(n_ids);
  std::vector<float> cpu = x;
  for (const int id : ids) cpu[id] = cpu[id] > 0.0f ? cpu[id] / penalty : cpu[id] * penalty;
  Buffer bx = upload(x), bids(context(), n_ids * 4);
  bids.upload(ids.data(), n_ids * 4);
  const std::uint32_t spec[1] = {block};
  const Pipeline& p = context().pipeline_from_spirv("sample_ops_repeat_penalty", spirv("sample_ops_repeat_penalty"), 2, 8, spec);
  Recorder rec(context());
  const Push2 push = {n_ids, penalty};
  rec.dispatch(p, {&bx, &bids}, push, (n_ids + block - 1) / block);
  rec.submit();
  trueno::test::expect_gpu_contract("decy", "sample_ops_repeat_penalty", download(bx, n), cpu, "1000 logits, 300 ids");
}
#else
TEST(DecyVulkanGpu, NeedsTheVulkanBackend) { GTEST_SKIP() << "skipped: the Vulkan backend is not built (TRUENO_VULKAN)"; }
#endif

}  // namespace
