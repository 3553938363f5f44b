// The CUDA sequence's modes against each other and the CPU (label gpu: visible skips without a device):
// batched prefill (Note [Batched prefill], prefill_cuda.cpp) in one batch and in chunks, against every
// prompt token through the decode step, and the cuBLAS-f16 decode baseline against the CPU pass.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string_view>
#include <tuple>
#include <vector>

#include "realizar/model.h"
#include "trueno/error.h"
#include "support/logits_compare.h"
#include "support/testdata.h"

namespace realizar {
namespace {

// Teacher-forced logits of ids on a CUDA sequence with options: the prompt ids[0, split) in one
// forward call, ids[split, split + 12) in a second, then the rest one token at a time.
std::vector<float> cuda_logits(const Model& model, const std::vector<std::int32_t>& ids, const CudaOptions& options,
                               std::size_t split) {
  const auto s = test::make_cuda_sequence(model, ids.size(), options);
  std::vector<float> all;
  const auto run = [&](std::span<const std::int32_t> part) {
    s->forward(part, true);
    all.insert(all.end(), s->logits().begin(), s->logits().end());
  };
  run(std::span(ids).first(split));
  run(std::span(ids).subspan(split, 12));
  for (std::size_t t = split + 12; t < ids.size(); ++t) run(std::span(ids).subspan(t, 1));
  return all;
}

std::vector<std::int32_t> probe_ids(const Model& model, std::size_t n) {
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < n; ++i) ids.push_back(static_cast<std::int32_t>((i * 37 + 1) % model.config().n_vocab));
  return ids;
}

// A test model with 48 probe ids and the CPU pass's teacher-forced logits of them (the reference).
struct CpuReference {
  explicit CpuReference(const char* name)
      : file(gguf::File::open(test::testdata_dir() + "/models/" + name)), model(file, Config::from_gguf(file)),
        ids(probe_ids(model, 48)), V(model.config().n_vocab) {
    Session cpu(model, ids.size());
    cpu.forward(ids, true);
    logits.assign(cpu.logits().begin(), cpu.logits().end());
  }
  gguf::File file;
  Model model;
  std::vector<std::int32_t> ids;
  std::size_t V;
  std::vector<float> logits;
};

// Batches multiply f16-rounded activations by f16-rounded weights (cuBLAS); the decode step multiplies
// Q8_K-quantized activations by the file's blocks (quantized types) or f32 activations by the weights.
// So the passes agree to rounding, not bit for bit. Float models: cosine >= 0.99999 per row and every
// argmax (measured on the H200: >= 0.9999999, 48/48). Quantized models: the activations' 8-bit rounding
// on one side: cosine >= 0.999 (measured >= 0.99969) and the same argmax on >= 85% of rows (measured
// >= 44/48: these probe tokens are not text, and a tiny model's top logits are then close together).
TEST(CudaGpuForward, BatchedPrefillAgreesWithTokenByToken) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  struct Probe {
    const char* name;
    bool quantized;
  };
  for (const auto& [name, quantized] : {Probe{"stories260K.gguf", false}, Probe{"stories260K-f16.gguf", false},
                                        Probe{"tiny-llama-q4_k_m.gguf", true}, Probe{"tiny-llama-q6_k.gguf", true},
                                        Probe{"tiny2-qwen2-q4_k_m.gguf", true}}) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    const auto ids = probe_ids(model, 48);
    const std::size_t V = model.config().n_vocab, rows = ids.size();
    CudaOptions tokens, batched, chunked;
    tokens.prefill = CudaOptions::Prefill::TokenByToken;
    chunked.prefill_chunk = 5;  // batches of 5: attention over earlier batches' cache, a partial last batch
    const auto want = cuda_logits(model, ids, tokens, 30);
    for (const auto& [label, options] : {std::pair{"one batch", batched}, std::pair{"chunks of 5", chunked}}) {
      const auto got = cuda_logits(model, ids, options, 30);
      ASSERT_EQ(got.size(), want.size());
      const test::RowStats st = test::compare_rows(got.data(), want.data(), rows, V);
      std::printf("%s, batched prefill (%s) vs token by token: min cosine %.7f, max |d| %.2e, argmax %zu/%zu\n", name, label,
                  st.min_cos, st.max_abs, st.agree, rows);
      EXPECT_GE(st.min_cos, quantized ? 0.999 : 0.99999) << name << " " << label;
      EXPECT_GE(st.agree * 100, rows * (quantized ? 85 : 100)) << name << " " << label;
    }
  }
}

// The baseline decode mode (weights dequantized to f16 at load, cuBLAS products) against the CPU pass,
// by the quantized-model bounds of the reference tests.
TEST(CudaGpuForward, CublasF16DecodeAgreesWithTheCpu) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : {"stories260K.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const CpuReference ref(name);
    const auto& [model, ids, V] = std::tie(ref.model, ref.ids, ref.V);
    CudaOptions cublas;
    cublas.decode_gemv = CudaOptions::DecodeGemv::CublasF16;
    for (const auto prefill : {CudaOptions::Prefill::F16, CudaOptions::Prefill::TokenByToken}) {
      cublas.prefill = prefill;
      const auto got = cuda_logits(model, ids, cublas, 30);
      const test::RowStats st = test::compare_rows(got.data(), ref.logits.data(), ids.size(), V);
      std::printf("%s, cublas-f16 decode (%s prompt) vs cpu: min cosine %.7f, argmax %zu/%zu\n", name,
                  prefill == CudaOptions::Prefill::F16 ? "batched" : "token", st.min_cos, st.agree, ids.size());
      if (st.min_cos < 0.999) {
        const auto cos = test::row_cosines(got.data(), ref.logits.data(), ids.size(), V);
        for (std::size_t r = 0; r < cos.size(); ++r) std::printf("  row %zu: cosine %.6f\n", r, cos[r]);
      }
      EXPECT_GE(st.min_cos, 0.99) << name;
      EXPECT_GE(st.agree * 10, ids.size() * 9) << name;
    }
  }
}

// FP8 prefill (Note [FP8 prefill]) against the CPU pass. E4M3 operands carry 3 mantissa bits, so the
// bounds are the seed's cosine (0.98) per row and the argmax on >= 75% of rows, looser than f16's.
TEST(CudaGpuForward, Fp8PrefillAgreesWithTheCpu) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : {"stories260K.gguf", "tiny-llama-f16.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const CpuReference ref(name);
    const auto& [model, ids, V] = std::tie(ref.model, ref.ids, ref.V);
    CudaOptions fp8;
    fp8.prefill = CudaOptions::Prefill::FP8;
    const auto s = test::make_cuda_sequence(model, ids.size(), fp8);
    s->forward(ids, true);
    const test::RowStats st = test::compare_rows(s->logits().data(), ref.logits.data(), ids.size(), V);
    std::printf("%s, fp8 prefill vs cpu: min cosine %.7f, max |d| %.2e, argmax %zu/%zu\n", name, st.min_cos, st.max_abs, st.agree,
                ids.size());
    EXPECT_GE(st.min_cos, 0.98) << name;
    EXPECT_GE(st.agree * 4, ids.size() * 3) << name;
  }
}

TEST(CudaForward, OptionsAreParsedAndUnknownValuesNamed) {
  EXPECT_EQ(parse_decode_gemv("cublas-f16"), CudaOptions::DecodeGemv::CublasF16);
  EXPECT_EQ(parse_decode_gemv("fused"), CudaOptions::DecodeGemv::Fused);
  EXPECT_EQ(parse_prefill_precision("fp8"), CudaOptions::Prefill::FP8);
  EXPECT_EQ(parse_prefill_precision("tokens"), CudaOptions::Prefill::TokenByToken);
  try {
    parse_prefill_precision("fp4");
    ADD_FAILURE();
  } catch (const trueno::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'fp4': expected f16, fp8 or tokens"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_decode_gemv("cublas"), trueno::InvalidArgument);
  EXPECT_EQ(parse_decode_attention("q8"), CudaOptions::DecodeAttention::Q8);
  EXPECT_EQ(parse_decode_attention("f16"), CudaOptions::DecodeAttention::F16);
  EXPECT_THROW(parse_decode_attention("q4"), trueno::InvalidArgument);
}

}  // namespace
}  // namespace realizar

namespace realizar {
namespace {

// Note [CUDA batched step]: sequences of different lengths join and leave a batch on shared weights; each
// sequence's logits agree with the same sequence stepped alone (the fused decode step) to the rounding
// bounds above (f16 products against Q8_K GEMVs); up to 14 sequences, joining one per step, so the steps
// of >= kMinGemmBatch go through the GEMMs and the others one by one.
TEST(CudaGpuForward, BatchedStepAgreesWithSingleSequences) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : {"tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf", "stories260K.gguf"}) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    const std::size_t V = model.config().n_vocab, kSeqs = 14, kCtx = 64;
    const auto weights = upload_weights(model, trueno::Device{trueno::DeviceKind::CUDA, 0});
    const auto batch = weights->new_batch();
    std::vector<std::unique_ptr<Sequence>> batched, alone;
    for (std::size_t i = 0; i < kSeqs; ++i) batched.push_back(weights->new_sequence(kCtx)), alone.push_back(weights->new_sequence(kCtx));
    double min_cos = 1;
    std::size_t agree = 0, rows = 0;
    for (std::size_t step = 0; step < 30; ++step) {
      std::vector<Sequence*> in;
      std::vector<std::int32_t> toks;
      for (std::size_t i = 0; i < kSeqs; ++i) {
        if (step == i) {  // joins with a prompt of its own length
          std::vector<std::int32_t> prompt;
          for (std::size_t t = 0; t <= 2 * i; ++t) prompt.push_back(static_cast<std::int32_t>((t * 31 + i * 7 + 1) % V));
          batched[i]->forward(prompt), alone[i]->forward(prompt);
        }
        if (step >= i && step < 16 + i) in.push_back(batched[i].get()), toks.push_back(static_cast<std::int32_t>((step * 13 + i * 5 + 2) % V));
      }
      batch->step(in, toks);
      for (std::size_t k = 0; k < in.size(); ++k) {
        Sequence* single = nullptr;
        for (std::size_t i = 0; i < kSeqs; ++i)
          if (batched[i].get() == in[k]) single = alone[i].get();
        single->forward(std::span(&toks[k], 1));
        ASSERT_EQ(in[k]->pos(), single->pos());
        const auto st = test::compare_rows(in[k]->logits().data(), single->logits().data(), 1, V);
        min_cos = std::min(min_cos, st.min_cos), agree += st.agree, ++rows;
      }
    }
    std::printf("%s: %zu batched rows, min cosine %.7f, argmax %zu/%zu\n", name, rows, min_cos, agree, rows);
    EXPECT_GE(min_cos, 0.999) << name;
    EXPECT_GE(agree * 100, rows * 85) << name;
  }
}

// Note [Joint prefill]: chunks of several sequences in one pass (different lengths, some sequences with
// a cached prefix already) leave each sequence where its own forward of the same chunk leaves it: the
// same position, and logits that agree to the rounding bounds of BatchedPrefillAgreesWithTokenByToken
// (quantized models; the float model >= 0.99999) with the same argmax; and the decode step after it
// reads the cache the pass wrote (compared the same way). Bad calls throw and advance nothing.
TEST(CudaGpuForward, JointPrefillAgreesWithSeparatePrompts) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : {"stories260K.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    const std::size_t V = model.config().n_vocab, kSeqs = 6, kCtx = 96;
    const bool quantized = std::string_view(name) != "stories260K.gguf";
    const auto weights = upload_weights(model, trueno::Device{trueno::DeviceKind::CUDA, 0});
    const auto batch = weights->new_batch();
    std::vector<std::unique_ptr<Sequence>> joint, alone;
    std::vector<std::vector<std::int32_t>> chunks(kSeqs);
    for (std::size_t i = 0; i < kSeqs; ++i) {
      joint.push_back(weights->new_sequence(kCtx)), alone.push_back(weights->new_sequence(kCtx));
      if (i % 2 == 1) {  // a cached prefix first
        std::vector<std::int32_t> prefix;
        for (std::size_t t = 0; t < 5 + i; ++t) prefix.push_back(static_cast<std::int32_t>((t * 17 + i + 3) % V));
        joint[i]->forward(prefix), alone[i]->forward(prefix);
      }
      for (std::size_t t = 0; t < 1 + 7 * i; ++t) chunks[i].push_back(static_cast<std::int32_t>((t * 29 + i * 11 + 1) % V));
    }
    std::vector<Sequence*> in;
    std::vector<std::span<const std::int32_t>> spans;
    for (std::size_t i = 0; i < kSeqs; ++i) in.push_back(joint[i].get()), spans.emplace_back(chunks[i]);
    // Bad calls: nothing advances.
    std::vector<Sequence*> twice{in[0], in[0]};
    std::vector<std::span<const std::int32_t>> two{spans[1], spans[2]};
    EXPECT_THROW(batch->prefill(twice, two), trueno::InvalidArgument);
    std::vector<std::int32_t> bad{1, static_cast<std::int32_t>(V)};
    std::vector<std::span<const std::int32_t>> with_bad{spans[1], std::span<const std::int32_t>(bad)};
    EXPECT_THROW(batch->prefill(std::span(in).first(2), with_bad), trueno::InvalidArgument);
    for (std::size_t i = 0; i < kSeqs; ++i) ASSERT_EQ(joint[i]->pos(), alone[i]->pos()) << name << ": a bad call advanced sequence " << i;

    batch->prefill(in, spans);
    double min_cos = 1;
    std::size_t agree = 0, rows = 0;
    for (int round = 0; round < 2; ++round) {  // the pass's logits, then a decode step over its cache
      for (std::size_t i = 0; i < kSeqs; ++i) {
        if (round == 0) alone[i]->forward(chunks[i]);
        ASSERT_EQ(joint[i]->pos(), alone[i]->pos()) << name << ", sequence " << i;
        const auto st = test::compare_rows(joint[i]->logits().data(), alone[i]->logits().data(), 1, V);
        min_cos = std::min(min_cos, st.min_cos), agree += st.agree, ++rows;
      }
      const std::int32_t next = 2;
      for (std::size_t i = 0; i < kSeqs; ++i) joint[i]->forward(std::span(&next, 1)), alone[i]->forward(std::span(&next, 1));
    }
    std::printf("%s: %zu rows, min cosine %.7f, argmax %zu/%zu\n", name, rows, min_cos, agree, rows);
    EXPECT_GE(min_cos, quantized ? 0.999 : 0.99999) << name;
    EXPECT_GE(agree * 100, rows * (quantized ? 85 : 100)) << name;
  }
}

// Note [Resident f16 weights]: the f16 copies made at load are the staging's f16 values, so a prompt
// pass and a batched GEMM step give the same logits, bit for bit, with resident and staged operands.
TEST(CudaGpuForward, ResidentF16WeightsEqualStagedOnes) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  const auto file = gguf::File::open(test::testdata_dir() + "/models/tiny-llama-q4_k_m.gguf");
  const Model model(file, Config::from_gguf(file));
  const auto ids = probe_ids(model, 40);
  std::vector<std::vector<float>> got;
  for (const auto how : {CudaOptions::GemmWeights::Staged, CudaOptions::GemmWeights::Resident}) {
    CudaOptions o;
    o.gemm_weights = how;
    const auto weights = upload_weights(model, trueno::Device{trueno::DeviceKind::CUDA, 0}, o);
    std::vector<std::unique_ptr<Sequence>> seqs;
    std::vector<Sequence*> in;
    std::vector<std::int32_t> toks;
    for (std::size_t i = 0; i < 8; ++i) {
      seqs.push_back(weights->new_sequence(64));
      seqs.back()->forward(std::span(ids).first(10 + i));
      in.push_back(seqs.back().get()), toks.push_back(ids[30 + i]);
    }
    std::vector<float> all(seqs[7]->logits().begin(), seqs[7]->logits().end());  // a prompt pass's
    weights->new_batch()->step(in, toks);                                          // a GEMM step (8 rows)
    for (const auto& s : seqs) all.insert(all.end(), s->logits().begin(), s->logits().end());
    got.push_back(std::move(all));
  }
  ASSERT_EQ(got[0].size(), got[1].size());
  EXPECT_EQ(std::memcmp(got[0].data(), got[1].data(), got[0].size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace realizar

namespace realizar {
namespace {

// Note [8-bit KV copy]: --decode-attention q8 against the f16 cache's attention on the same weights. A
// prompt of 300 positions (the copy made after the prompt pass), decode steps reading the copy, a batched
// step of five sequences in between (it writes only the f16 cache: the copy catches up before the next
// single step), a sequence crossing 256 positions (one block per head reads the f16 cache below, the
// copy is made at the crossing), and a reset sequence reused for a shorter prompt. The copy rounds K and V
// to 8 bits, so the logits agree to rounding: cosine >= 0.999 per row, the same argmax on >= 85% of rows.
TEST(CudaGpuForward, KvCopyQ8AgreesWithTheF16Cache) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  CudaOptions q8;
  q8.decode_attention = CudaOptions::DecodeAttention::Q8;
  const trueno::Device cuda{trueno::DeviceKind::CUDA, 0};
  for (const char* name : {"tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    const std::size_t V = model.config().n_vocab, kCtx = 640, kSeqs = 5;
    const auto w16 = upload_weights(model, cuda), w8 = upload_weights(model, cuda, q8);
    EXPECT_NE(w8->backend_name().find("q8-attention"), std::string::npos) << w8->backend_name();
    const auto tok = [&](std::size_t t, std::size_t i) { return static_cast<std::int32_t>((t * 37 + i * 11 + 1) % V); };
    double min_cos = 1;
    std::size_t agree = 0, rows = 0;
    const auto compare = [&](const Sequence& a, const Sequence& b) {
      ASSERT_EQ(a.pos(), b.pos());
      const auto st = test::compare_rows(a.logits().data(), b.logits().data(), 1, V);
      min_cos = std::min(min_cos, st.min_cos), agree += st.agree, ++rows;
    };
    std::vector<std::unique_ptr<Sequence>> s8, s16;
    for (std::size_t i = 0; i < kSeqs; ++i) {
      s8.push_back(w8->new_sequence(kCtx)), s16.push_back(w16->new_sequence(kCtx));
      std::vector<std::int32_t> prompt;
      for (std::size_t t = 0; t < 300 + i; ++t) prompt.push_back(tok(t, i));
      s8[i]->forward(prompt), s16[i]->forward(prompt);
      for (std::size_t t = 0; t < 6; ++t) {
        const std::int32_t next = tok(1000 + t, i);
        s8[i]->forward(std::span(&next, 1)), s16[i]->forward(std::span(&next, 1));
        compare(*s8[i], *s16[i]);
      }
    }
    const auto batch = w8->new_batch();
    std::vector<Sequence*> in;
    std::vector<std::int32_t> toks;
    for (std::size_t i = 0; i < kSeqs; ++i) in.push_back(s8[i].get()), toks.push_back(tok(2000, i));
    for (int step = 0; step < 2; ++step) {
      batch->step(in, toks);
      for (std::size_t i = 0; i < kSeqs; ++i) s16[i]->forward(std::span(&toks[i], 1)), compare(*s8[i], *s16[i]);
    }
    for (std::size_t i = 0; i < kSeqs; ++i)
      for (std::size_t t = 0; t < 3; ++t) {
        const std::int32_t next = tok(3000 + t, i);
        s8[i]->forward(std::span(&next, 1)), s16[i]->forward(std::span(&next, 1));
        compare(*s8[i], *s16[i]);
      }
    // Reset and reused: a prompt of 250 (one block per head), then steps across 256 positions.
    s8[0]->reset(), s16[0]->reset();
    std::vector<std::int32_t> prompt;
    for (std::size_t t = 0; t < 250; ++t) prompt.push_back(tok(t, 9));
    s8[0]->forward(prompt), s16[0]->forward(prompt);
    for (std::size_t t = 0; t < 12; ++t) {
      const std::int32_t next = tok(4000 + t, 0);
      s8[0]->forward(std::span(&next, 1)), s16[0]->forward(std::span(&next, 1));
      compare(*s8[0], *s16[0]);
    }
    EXPECT_GT(s8[0]->kv_bytes(), s16[0]->kv_bytes() * 3 / 2) << "the copy is kept beside the f16 cache";
    std::printf("%s: %zu rows over the 8-bit copy, min cosine %.7f, argmax %zu/%zu\n", name, rows, min_cos, agree, rows);
    EXPECT_GE(min_cos, 0.999) << name;
    EXPECT_GE(agree * 100, rows * 85) << name;
  }
  // Heads of 8 values (stories260K): refused at load, naming the head size.
  const auto file = gguf::File::open(test::testdata_dir() + "/models/stories260K.gguf");
  const Model small(file, Config::from_gguf(file));
  try {
    upload_weights(small, cuda, q8);
    ADD_FAILURE() << "stories260K's heads of 8 values were taken";
  } catch (const trueno::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("heads have 8 values"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace realizar
