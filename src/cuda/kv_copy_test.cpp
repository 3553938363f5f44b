// The 8-bit copy of the KV cache (Note [8-bit KV copy], kernels/attention.cuh): kv_quantize_q8 against the
// CPU's quantize(Q8_0), and the split attention over the copy against the CPU's attention over the copy's
// values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/cuda_test_support.h"
#include "cuda/nvrtc.h"
#include "quant/blocks.h"
#include "trueno/cuda/ops/layer.h"
#include "trueno/ops.h"
#include "trueno/quant.h"

namespace trueno::cuda::testing {
namespace {

template <class T>
std::vector<T> download(const DeviceBuffer& b, std::size_t n, std::size_t offset = 0) {
  std::vector<T> v(n);
  b.download(v.data(), n * sizeof(T), offset * sizeof(T));
  return v;
}

TEST(CudaGpu, AttentionOverTheKvCopyQ8MatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 31);
  struct Shape { int n_head, n_kv, hd, n; };
  for (Shape sh : {Shape{32, 8, 128, 1000}, Shape{4, 2, 64, 513}, Shape{32, 32, 128, 300}, Shape{14, 2, 64, 777},
                   Shape{4, 2, 128, 40000},  // 625 chunks, past one pass of the second level
                   Shape{8, 8, 64, 1},
                   Shape{2, 2, 128, 3001}, Shape{1, 1, 64, 700}}) {  // the split's ways > 1 (2 and 4 warps a q head)
    const int kv_row = sh.n_kv * sh.hd, group = sh.n_head / sh.n_kv, n_ctx = sh.n + 70, layers = 2, layer = 1;
    const std::string what =
        std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " heads x " + std::to_string(sh.hd) + ", " + std::to_string(sh.n) + " positions";
    // Layer 1 of two holds the sequence (layer 0 zeros): the copy's layer offsets are under test too.
    const std::size_t per_layer = static_cast<std::size_t>(n_ctx) * kv_row;
    std::vector<std::uint16_t> kc(layers * per_layer), vc(layers * per_layer);
    {
      const auto kf = random_vector(static_cast<std::size_t>(sh.n) * kv_row, rng), vf = random_vector(kf.size(), rng, 0.5f);
      ops::f32_to_f16(kf, std::span(kc).subspan(layer * per_layer, kf.size()));
      ops::f32_to_f16(vf, std::span(vc).subspan(layer * per_layer, vf.size()));
    }
    DeviceBuffer dk = to_device(kc), dv = to_device(vc);
    KvCopyQ8 copy(c, layers, n_ctx, kv_row);
    // A pattern where nothing is written: the launches must leave it (other layers and positions) alone.
    const std::vector<std::uint8_t> pattern(layers * per_layer, 0x55);
    copy.k.upload(pattern.data(), pattern.size()), copy.v.upload(pattern.data(), pattern.size());
    copy.kd.upload(pattern.data(), pattern.size() / 16), copy.vd.upload(pattern.data(), pattern.size() / 16);
    // The prompt's positions in two ranges, the last position as the decode step writes it (*pos).
    const int half = sh.n / 2, last = sh.n - 1;
    kv_quantize_q8(c, dk.ptr(), dv.ptr(), copy, 0, half);
    kv_quantize_q8(c, dk.ptr(), dv.ptr(), copy, half, last - half);
    DeviceBuffer dpos = to_device(&last, sizeof last);
    kv_quantize_q8_at(c, dk.ptr(), dv.ptr(), copy, layer, dpos.ptr());
    kv_quantize_q8_at(c, dk.ptr(), dv.ptr(), copy, 0, dpos.ptr());

    // The copy holds the CPU's Q8_0 blocks of every row, bit for bit; k, v get its values (d * q).
    std::vector<float> k(static_cast<std::size_t>(sh.n) * kv_row), v(k.size());
    const std::size_t nb = k.size() / 32;
    for (int which = 0; which < 2; ++which) {
      const std::vector<std::uint16_t>& cache = which == 0 ? kc : vc;
      const DeviceBuffer& q8 = which == 0 ? copy.k : copy.v;
      const DeviceBuffer& d8 = which == 0 ? copy.kd : copy.vd;
      std::vector<float> f(k.size());
      ops::f16_to_f32(std::span(cache).subspan(layer * per_layer, f.size()), f);
      std::vector<std::byte> blocks(nb * sizeof(quant::BlockQ8_0));
      quantize(QuantType::Q8_0, f, blocks);
      const auto got_q = download<std::int8_t>(q8, k.size(), layer * per_layer);
      const auto got_d = download<std::uint16_t>(d8, nb, layer * per_layer / 32);
      std::size_t differ = 0;
      for (std::size_t b = 0; b < nb; ++b) {
        quant::BlockQ8_0 want;
        std::memcpy(&want, blocks.data() + b * sizeof want, sizeof want);
        differ += want.d != got_d[b] || std::memcmp(want.qs, got_q.data() + b * 32, 32) != 0;
      }
      gpu_contract("kv_quantize_q8");
      EXPECT_EQ(differ, 0u) << what << (which == 0 ? ": K" : ": V") << " blocks differ from quantize(Q8_0)";
      dequantize(QuantRow::view(QuantType::Q8_0, blocks, k.size()), which == 0 ? std::span(k) : std::span(v));
      // Layer 0 (the ranges cover every layer; *pos wrote its position `last` again) from zeros: values and
      // scales 0 (the zero block) for the sequence's positions; past them the pattern, in both layers.
      const auto l0 = download<std::uint8_t>(q8, per_layer), l1 = download<std::uint8_t>(q8, per_layer, per_layer);
      const auto d0 = download<std::uint16_t>(d8, per_layer / 32), d1 = download<std::uint16_t>(d8, per_layer / 32, per_layer / 32);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < per_layer; ++i) wrong += l0[i] != (i < k.size() ? 0 : 0x55), wrong += i >= k.size() && l1[i] != 0x55;
      for (std::size_t b = 0; b < per_layer / 32; ++b) wrong += d0[b] != (b < nb ? 0 : 0x5555), wrong += b >= nb && d1[b] != 0x5555;
      EXPECT_EQ(wrong, 0u) << what << ": values written outside the positions and layers given";
    }

    const auto q = random_vector(static_cast<std::size_t>(sh.n_head) * sh.hd, rng);
    const std::vector<float> want = attention_reference(q, k, v, sh.n_head, sh.n_kv, sh.hd, sh.n);
    DeviceBuffer dq = to_device(q);
    AttentionScratch scratch(c, n_ctx, sh.n_head, sh.hd);
    const int positions = sh.n % 2 == 0 ? 0 : sh.n;  // the whole context, or a bucket's positions
    const auto attend = [&](Q8Passes passes) {
      DeviceBuffer out(c, q.size() * 4);
      attention_decode_q8(c, dq.ptr(), copy, layer, out.ptr(), dpos.ptr(), scratch, sh.n_head, sh.hd, group, positions, passes);
      return from_device(out, q.size());
    };
    const auto got = attend(Q8Passes::Two);
    gpu_contract("attention_scores_q8"), gpu_contract("attention_combine_wide");
    expect_contract("attention_weights_v_q8", got, want, what);
    // Note [One pass over the 8-bit copy]: the same attention in one pass, against the CPU and the two passes.
    const auto got1 = attend(Q8Passes::One);
    gpu_contract("attention_combine_rescaled");
    expect_contract("attention_one_pass_q8", got1, want, what + ", one pass");
    expect_contract("attention_one_pass_q8", got1, got, what + ", one pass against two", 2);
    // Note [Split over the 8-bit copy]: the same scores and f32 weights, the softmax online over a split's tiles.
    const auto got2 = attend(Q8Passes::Split);
    gpu_contract("attention_combine_splits");
    expect_contract("attention_split_q8", got2, want, what + ", split");
    expect_contract("attention_split_q8", got2, got1, what + ", split against the one pass", 2);

    // What the copy costs in accuracy: the f16 cache's exact attention against the copy's.
    std::vector<float> kx(k.size()), vx(v.size());
    ops::f16_to_f32(std::span(kc).subspan(layer * per_layer, k.size()), kx);
    ops::f16_to_f32(std::span(vc).subspan(layer * per_layer, v.size()), vx);
    const std::vector<float> exact = attention_reference(q, kx, vx, sh.n_head, sh.n_kv, sh.hd, sh.n);
    expect_contract("attention_weights_v_q8", got, exact, what + " against the f16 cache", 1);
    expect_contract("attention_one_pass_q8", got1, exact, what + ", one pass, against the f16 cache", 1);
    expect_contract("attention_split_q8", got2, exact, what + ", split, against the f16 cache", 1);
  }
  // Refused: head sizes other than 64 and 128, layers and positions outside the copy, an output not 16-byte
  // aligned, rows not of 32s.
  KvCopyQ8 copy(c, 2, 64, 128);
  AttentionScratch scratch(c, 64, 4, 80);
  DeviceBuffer dq(c, 4 * 80 * 4), out(c, 4 * 80 * 4), dpos(c, 4);
  EXPECT_THROW(attention_decode_q8(c, dq.ptr(), copy, 0, out.ptr(), dpos.ptr(), scratch, 4, 80, 1), InvalidArgument);
  AttentionScratch scratch64(c, 64, 4, 64);
  EXPECT_THROW(attention_decode_q8(c, dq.ptr(), copy, 2, out.ptr(), dpos.ptr(), scratch64, 4, 64, 2), InvalidArgument);
  for (Q8Passes passes : {Q8Passes::Default, Q8Passes::One, Q8Passes::Split})  // float4 stores: a 16-byte aligned output
    EXPECT_THROW(attention_decode_q8(c, dq.ptr(), copy, 0, out.ptr() + 4, dpos.ptr(), scratch64, 4, 64, 2, 0, passes), InvalidArgument);
  EXPECT_THROW(kv_quantize_q8(c, dq.ptr(), dq.ptr(), copy, 60, 5), InvalidArgument);
  EXPECT_THROW(KvCopyQ8(c, 2, 64, 80), InvalidArgument);
  EXPECT_FALSE(attention_q8_supports(80));
  EXPECT_TRUE(attention_q8_supports(128));
}

// Note [Rope and the 8-bit copy in one launch]: rope_append_q8 leaves q, k, both caches and the copy as
// rope_append followed by kv_quantize_q8_at does, bit for bit, in the layer given and nowhere else.
TEST(CudaGpu, RopeAndCopyInOneLaunchEqualRopeAppendThenQuantize) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 37);
  struct Shape { int n_head, n_kv, hd, rope_dim; bool neox; int pos; };
  for (Shape sh : {Shape{32, 32, 128, 128, false, 16384}, Shape{32, 4, 64, 64, true, 300}, Shape{8, 2, 128, 64, false, 257},
                   Shape{4, 1, 64, 32, true, 1000}, Shape{16, 2, 256, 256, false, 513}, Shape{4, 4, 96, 96, true, 700}}) {
    if (!rope_append_q8_fusable(sh.hd, sh.rope_dim)) GTEST_SKIP() << "TRUENO_ROPE_APPEND_Q8=0";
    const int n_ctx = sh.pos + 3, kv_row = sh.n_kv * sh.hd, layers = 2, layer = 1;
    const std::string what = std::to_string(sh.n_head) + "/" + std::to_string(sh.n_kv) + " x " + std::to_string(sh.hd) + ", rope " +
                             std::to_string(sh.rope_dim) + (sh.neox ? " neox" : "") + ", position " + std::to_string(sh.pos);
    const std::size_t per_layer = static_cast<std::size_t>(n_ctx) * kv_row;
    const auto q = random_vector(static_cast<std::size_t>(sh.n_head) * sh.hd, rng), k = random_vector(kv_row, rng), v = random_vector(kv_row, rng);
    std::vector<std::uint16_t> cache(layers * per_layer);
    ops::f32_to_f16(random_vector(cache.size(), rng), cache);  // noise: only the step's row may change
    const std::vector<std::uint8_t> pattern(layers * per_layer, 0x55);
    const float ts = std::pow(10000.0f, -2.0f / static_cast<float>(sh.rope_dim));
    const RopeParams rope{sh.hd, sh.rope_dim, ts, 0, sh.neox};
    DeviceBuffer dpos = to_device(&sh.pos, sizeof sh.pos);
    struct Run {
      DeviceBuffer q, k, v, kc, vc;
      KvCopyQ8 copy;
    };
    const auto make = [&] {
      Run r{to_device(q), to_device(k), to_device(v), to_device(cache), to_device(cache), KvCopyQ8(c, layers, n_ctx, kv_row)};
      r.copy.k.upload(pattern.data(), pattern.size()), r.copy.v.upload(pattern.data(), pattern.size());
      r.copy.kd.upload(pattern.data(), pattern.size() / 16), r.copy.vd.upload(pattern.data(), pattern.size() / 16);
      return r;
    };
    const std::uint64_t off = static_cast<std::uint64_t>(layer) * per_layer * 2;  // bytes of f16
    Run a = make(), b = make();
    rope_append(c, a.q.ptr(), a.k.ptr(), a.v.ptr(), sh.n_head, sh.n_kv, dpos.ptr(), rope, a.kc.ptr() + off, a.vc.ptr() + off);
    kv_quantize_q8_at(c, a.kc.ptr(), a.vc.ptr(), a.copy, layer, dpos.ptr());
    rope_append_q8(c, b.q.ptr(), b.k.ptr(), b.v.ptr(), sh.n_head, sh.n_kv, dpos.ptr(), rope, b.kc.ptr() + off, b.vc.ptr() + off, b.copy, layer);
    EXPECT_EQ(from_device(b.q, q.size()), from_device(a.q, q.size())) << what << ": q";
    EXPECT_NE(from_device(b.q, q.size()), q) << what << ": q rotated";
    EXPECT_EQ(from_device(b.k, k.size()), from_device(a.k, k.size())) << what << ": k";
    for (auto [x, y, name] : {std::tuple{&a.kc, &b.kc, "K cache"}, std::tuple{&a.vc, &b.vc, "V cache"}}) {
      const auto want = download<std::uint16_t>(*x, cache.size()), got = download<std::uint16_t>(*y, cache.size());
      EXPECT_EQ(got, want) << what << ": " << name;
      EXPECT_NE(got, cache) << what << ": " << name << ", the step's row appended";
    }
    EXPECT_EQ(download<std::int8_t>(b.copy.k, pattern.size()), download<std::int8_t>(a.copy.k, pattern.size())) << what << ": K copy";
    EXPECT_EQ(download<std::int8_t>(b.copy.v, pattern.size()), download<std::int8_t>(a.copy.v, pattern.size())) << what << ": V copy";
    EXPECT_EQ(download<std::uint16_t>(b.copy.kd, pattern.size() / 32), download<std::uint16_t>(a.copy.kd, pattern.size() / 32)) << what;
    EXPECT_EQ(download<std::uint16_t>(b.copy.vd, pattern.size() / 32), download<std::uint16_t>(a.copy.vd, pattern.size() / 32)) << what;
    const auto row = download<std::int8_t>(b.copy.k, kv_row, layer * per_layer + static_cast<std::size_t>(sh.pos) * kv_row);
    EXPECT_NE(row, std::vector<std::int8_t>(kv_row, 0x55)) << what << ": the step's row quantized";
  }
  DeviceBuffer any(c, 1 << 16);
  KvCopyQ8 copy(c, 2, 16, 256);
  const RopeParams rope80{80, 80, 0.9f, 0, false}, rope64{64, 64, 0.9f, 0, false};
  EXPECT_THROW(rope_append_q8(c, any.ptr(), any.ptr(), any.ptr(), 4, 4, any.ptr(), rope80, any.ptr(), any.ptr(), copy, 0), InvalidArgument);
  EXPECT_THROW(rope_append_q8(c, any.ptr(), any.ptr(), any.ptr(), 4, 4, any.ptr(), rope64, any.ptr(), any.ptr(), copy, 2), InvalidArgument);
  EXPECT_THROW(rope_append_q8(c, any.ptr(), any.ptr(), any.ptr(), 4, 3, any.ptr(), rope64, any.ptr(), any.ptr(), copy, 0), InvalidArgument);
  EXPECT_FALSE(rope_append_q8_fusable(64, 0));
  EXPECT_FALSE(rope_append_q8_fusable(512, 512));
}

}  // namespace
}  // namespace trueno::cuda::testing
