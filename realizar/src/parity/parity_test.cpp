// The parity gate (Note [Parity gate]) with fake GPU backends built from the CPU pass: a correct one
// passes on every test model, injected faults are rejected and the CPU is chosen, verdicts are cached,
// and a backend that fails mid-generation hands over to the CPU without losing tokens.
#include "realizar/parity.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "realizar/recorder.h"
#include "support/gguf_damage.h"
#include "support/logits_compare.h"
#include "support/testdata.h"

namespace realizar::parity {
namespace {

// A "GPU" that is the CPU pass plus an injected fault.
struct Fault {
  std::size_t perturb_from = SIZE_MAX;  // positions >= this get logits of another position (as a rope bug would)
  bool nan = false;                     // NaN logits at position 5
  int throw_on_call = -1;               // forward call number that throws (a launch failure)
  bool decode_only = false;             // perturb only one-token calls (a bug in the decode kernels)
  bool swap_top2 = false;               // instead: swap the two largest logits (argmax changes, cosine barely)
  int layer = -1;                       // instead: this layer's ffn_out and all after it negated (recorded and logits)
};

// Records what it computes as a real backend would: the fault shows in the recorded tensors too (the
// logits as returned; with `layer`, that layer's ffn_out and everything after it negated, as a wrong down
// projection would carry through the rest of the pass).
class FakeGpu final : public Sequence, private Recorder {
 public:
  FakeGpu(const Model& m, std::size_t n_ctx, Fault f, int* calls) : s_(m, n_ctx), f_(f), calls_(calls) {}
  std::size_t n_ctx() const override { return s_.n_ctx(); }
  std::size_t pos() const override { return s_.pos(); }
  void reset() override { s_.reset(); }
  std::size_t kv_bytes() const override { return s_.kv_bytes(); }
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override { return "fake-gpu"; }
  void set_recorder(Recorder* r) override {
    to_ = r;
    s_.set_recorder(r != nullptr ? this : nullptr);
  }
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override {
    const int call = (*calls_)++;
    if (call == f_.throw_on_call) throw std::runtime_error("fake-gpu: an illegal memory access was encountered (injected)");
    const std::size_t p0 = s_.pos();
    last_ = p0 + tokens.size() - 1, one_token_ = tokens.size() == 1;
    s_.forward(tokens, all_logits);
    logits_.assign(s_.logits().begin(), s_.logits().end());
    const std::size_t rows = all_logits ? tokens.size() : 1, V = logits_.size() / rows;
    for (std::size_t r = 0; r < rows; ++r) perturb(logits_.data() + r * V, V, all_logits ? p0 + r : last_);
  }

 private:
  Session s_;
  Fault f_;
  int* calls_;
  std::vector<float> logits_;
  Recorder* to_ = nullptr;
  std::size_t last_ = 0;  // the position of the call's last token (the recorded one)
  bool one_token_ = false, past_ = false;

  void perturb(float* row, std::size_t V, std::size_t pos) const {
    if (pos >= f_.perturb_from && (!f_.decode_only || one_token_)) {
      if (f_.layer >= 0) {
        for (std::size_t k = 0; k < V; ++k) row[k] = -row[k];
      } else if (f_.swap_top2) {
        const std::size_t top = std::max_element(row, row + V) - row;
        std::size_t second = top == 0 ? 1 : 0;
        for (std::size_t k = 0; k < V; ++k)
          if (k != top && row[k] > row[second]) second = k;
        std::swap(row[top], row[second]);
      } else {
        std::rotate(row, row + V / 3, row + V);  // someone else's logits
      }
    }
    if (f_.nan && pos == 5) row[7] = std::numeric_limits<float>::quiet_NaN();
  }

  void record(int layer, std::string_view t, std::span<const float> v) override {
    if (t == "token_embd") past_ = false;
    if (f_.layer >= 0 && last_ >= f_.perturb_from && layer == f_.layer && t == "ffn_out") past_ = true;
    std::vector<float> out(v.begin(), v.end());
    if (t == "logits")
      perturb(out.data(), out.size(), last_);
    else if (past_)
      for (float& x : out) x = -x;
    to_->record(layer, t, out);
  }
};

// Forward calls of one gate: the probe's first half as a batch, then one call per remaining token.
constexpr int kProbeCalls = 1 + static_cast<int>(kProbePositions - kProbePositions / 2);

Candidate fake(const Model& m, Fault f, int* calls, std::string identity = "fake device 1") {
  return {"fake-gpu", std::move(identity), [&m, f, calls](std::size_t n) { return std::make_unique<FakeGpu>(m, n, f, calls); }};
}

struct Loaded {
  explicit Loaded(const std::string& name)
      : file(gguf::File::open(test::testdata_dir() + "/models/" + name)), model(file, Config::from_gguf(file)) {}
  gguf::File file;
  Model model;
};

TEST(Parity, CodeAgreesWithTheContract) {
  const char* env = std::getenv("TRUENO_CONTRACTS_DIR");
  const YAML::Node y = YAML::LoadFile(std::string(env ? env : TRUENO_CONTRACTS_DIR) + "/gpu-parity.yaml");
  EXPECT_EQ(y["gate"]["min_cosine"].as<double>(), kMinCosine);
  EXPECT_EQ(y["gate"]["min_argmax_agreement"].as<double>(), kMinArgmaxAgreement);
  EXPECT_EQ(y["gate"]["tensor_min_cosine"].as<double>(), kTensorMinCosine);
  EXPECT_EQ(y["gate"]["min_positions"].as<std::size_t>(), kMinPositions);
  EXPECT_EQ(y["gate"]["probe_positions"].as<std::size_t>(), kProbePositions);
  EXPECT_EQ(y["priority"][0].as<std::string>(), "cuda");
}

TEST(Parity, CompareNamesTheWorstPosition) {
  const std::size_t T = 10, V = 5;
  std::vector<float> a(T * V), b;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  b = a;
  std::reverse(b.begin() + 6 * V, b.begin() + 7 * V);  // position 6 only
  const Verdict v = compare("x", a.data(), b.data(), T, V);
  EXPECT_FALSE(v.passed);
  EXPECT_LT(v.min_cosine, kMinCosine);
  EXPECT_NE(v.reason.find("at position 6"), std::string::npos) << v.reason;
  EXPECT_TRUE(compare("x", a.data(), a.data(), T, V).passed);
  EXPECT_FALSE(compare("x", a.data(), a.data(), 4, V).passed) << "fewer than kMinPositions positions is no verdict";
  std::vector<float> zeros(T * V, 0.0f);
  EXPECT_FALSE(compare("x", a.data(), zeros.data(), T, V).passed) << "an all-zero row is not a match";
}

TEST(Parity, ProbeStartsWithThePromptAndHasEnoughPositions) {
  Loaded l("stories260K.gguf");
  const std::vector<std::int32_t> prompt = {1, 403, 407};
  const auto p = probe_tokens(l.model, prompt);
  ASSERT_EQ(p.size(), kProbePositions);
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), p.begin()));
  for (const auto id : p) EXPECT_LT(static_cast<std::size_t>(id), l.model.config().n_vocab);
  EXPECT_EQ(probe_tokens(l.model, {}).size(), kProbePositions);
}

// A correct backend is never rejected: on every model in tests/data/models.
TEST(Parity, GatePassesACorrectBackendOnEveryTestModel) {
  for (const auto& entry : std::filesystem::directory_iterator(test::testdata_dir() + "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    Loaded l(entry.path().filename().string());
    int calls = 0;
    const Candidate c[] = {fake(l.model, {}, &calls)};
    const Selection s = select(l.model, c, 32, {}, GateOptions{});
    std::printf("%s: %s\n", entry.path().filename().c_str(), s.line.c_str());
    EXPECT_EQ(s.sequence->backend_name(), "fake-gpu") << entry.path() << ": " << s.line;
    ASSERT_EQ(s.verdicts.size(), 1u);
    EXPECT_TRUE(s.verdicts[0].passed);
    EXPECT_EQ(s.verdicts[0].positions.size(), kProbePositions);
    EXPECT_EQ(s.sequence->pos(), 0u) << "the kept sequence starts empty";
  }
}

// Faults like the ones seen in the wild (logits of the wrong position from position 4 on, NaNs, a crash
// in a kernel, a backend that cannot start): each is rejected, reported, and the CPU is chosen.
TEST(Parity, GateRejectsInjectedFaultsAndChoosesTheCpu) {
  Loaded l("tiny-llama-q4_k_m.gguf");
  const std::vector<std::int32_t> prompt = {1, 150, 298, 92, 26, 366};
  int calls = 0;
  struct Case {
    const char* what;
    Fault fault;
    const char* reason;
  };
  for (const Case& k : {Case{"rope at positions >= 4", Fault{4, false, -1}, "at position 4"}, Case{"NaN", Fault{SIZE_MAX, true, -1}, "non-finite logits at position 5"},
                        Case{"launch failure", Fault{SIZE_MAX, false, 0}, "the probe failed"},
                        Case{"decode kernels only, from position 12", Fault{12, false, -1, true}, "< 0.98 at position 1"}}) {
    calls = 0;
    const Candidate c[] = {fake(l.model, k.fault, &calls)};
    std::vector<std::string> logged;
    GateOptions o;
    o.log = [&](const std::string& line) { logged.push_back(line); };
    const Selection s = select(l.model, c, 64, prompt, o);
    std::printf("%s: %s\n", k.what, s.line.c_str());
    EXPECT_NE(s.sequence->backend_name(), "fake-gpu") << k.what;
    ASSERT_EQ(s.verdicts.size(), 1u);
    EXPECT_FALSE(s.verdicts[0].passed) << k.what;
    EXPECT_NE(s.verdicts[0].reason.find(k.reason), std::string::npos) << k.what << ": " << s.verdicts[0].reason;
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_NE(logged[0].find("fake-gpu rejected"), std::string::npos) << logged[0];
  }
  const Candidate cannot_start[] = {{"fake-gpu", "x", [](std::size_t) -> std::unique_ptr<Sequence> {
                                       throw trueno::BackendUnavailable("fake-gpu: out of memory: 4.0 GiB requested, 1.2 GiB free");
                                     }}};
  const Selection s = select(l.model, cannot_start, 64, prompt, GateOptions{});
  EXPECT_NE(s.sequence->backend_name(), "fake-gpu");
  EXPECT_NE(s.verdicts[0].reason.find("out of memory"), std::string::npos) << s.verdicts[0].reason;
}

// The first passing candidate in priority order wins; a failing one before it does not stop the search.
TEST(Parity, TheFirstPassingCandidateInPriorityOrderIsChosen) {
  Loaded l("stories260K.gguf");
  int bad_calls = 0, good_calls = 0;
  const Candidate c[] = {fake(l.model, Fault{4, false, -1}, &bad_calls, "a"), fake(l.model, {}, &good_calls, "b")};
  const Selection s = select(l.model, c, 32, {}, GateOptions{});
  ASSERT_EQ(s.verdicts.size(), 2u);
  EXPECT_FALSE(s.verdicts[0].passed);
  EXPECT_TRUE(s.verdicts[1].passed);
  EXPECT_EQ(s.sequence->backend_name(), "fake-gpu");
  EXPECT_EQ(good_calls, kProbeCalls);
}

// A device that is not chosen automatically (DeviceStatus::automatic: a CPU-type Vulkan device such as
// lavapipe) is no candidate of the automatic gate; named with --backend (`only`), it is one when realizar
// has a forward pass for its kind.
TEST(Parity, DevicesNotChosenAutomaticallyAreCandidatesOnlyWhenForced) {
  Loaded l("stories260K.gguf");
  const auto all = gpu_candidates(l.model, CudaOptions{});
  for (const trueno::DeviceStatus& s : trueno::device_report()) {
    if (!s.available) continue;
    const std::string name = s.device.index == 0 ? std::string(trueno::name(s.device.kind)) : s.device.str();
    const bool listed = std::any_of(all.begin(), all.end(), [&](const Candidate& c) { return c.name == name; });
    if (!s.automatic) {
      EXPECT_FALSE(listed) << s.device.str() << ": " << s.detail;
    }
    const auto forced = gpu_candidates(l.model, CudaOptions{}, s.device);
    EXPECT_EQ(forced.size(), has_forward(s.device.kind) ? 1u : 0u) << s.device.str();
  }
}

TEST(Parity, ForcedBackendIsUsedDespiteFailingAndSkippingIsSaid) {
  Loaded l("stories260K.gguf");
  int calls = 0;
  const Candidate c[] = {fake(l.model, Fault{4, false, -1}, &calls)};
  GateOptions forced;
  forced.forced = true;
  const Selection s = select(l.model, c, 32, {}, forced);
  EXPECT_EQ(s.sequence->backend_name(), "fake-gpu");
  EXPECT_NE(s.line.find("rejected"), std::string::npos) << s.line;
  EXPECT_NE(s.line.find("used anyway"), std::string::npos) << s.line;
  GateOptions skip;
  skip.skip = true;
  calls = 0;
  const Selection k = select(l.model, c, 32, {}, skip);
  EXPECT_EQ(k.sequence->backend_name(), "fake-gpu");
  EXPECT_EQ(calls, 0) << "no probe when the gate is skipped";
  EXPECT_NE(k.line.find("not checked"), std::string::npos) << k.line;
}

TEST(Parity, VerdictsAreCachedPerModelAndBackendAndRecheckRunsTheGate) {
  Loaded l("stories260K.gguf");
  const std::string dir = ::testing::TempDir() + "/parity_cache_test";
  std::filesystem::remove_all(dir);
  GateOptions o;
  o.cache_dir = dir, o.model_identity = model_identity(l.file);
  int calls = 0;
  const Candidate good[] = {fake(l.model, {}, &calls)};
  EXPECT_FALSE(select(l.model, good, 32, {}, o).verdicts[0].cached);
  EXPECT_EQ(calls, kProbeCalls);
  const Selection again = select(l.model, good, 32, {}, o);
  EXPECT_TRUE(again.verdicts[0].cached);
  EXPECT_EQ(calls, kProbeCalls) << "a cached verdict runs no probe";
  EXPECT_NE(again.line.find("cached verdict"), std::string::npos) << again.line;
  EXPECT_EQ(again.verdicts[0].positions.size(), kProbePositions);
  o.recheck = true;
  EXPECT_FALSE(select(l.model, good, 32, {}, o).verdicts[0].cached);
  EXPECT_EQ(calls, 2 * kProbeCalls);
  o.recheck = false;
  // Another device (identity) is another verdict; a damaged entry is ignored and rewritten.
  const Candidate other[] = {fake(l.model, {}, &calls, "fake device 2")};
  EXPECT_FALSE(select(l.model, other, 32, {}, o).verdicts[0].cached);
  for (const auto& e : std::filesystem::directory_iterator(dir)) std::ofstream(e.path()) << "backend fake-gpu\npassed 1\nposition x\n";
  EXPECT_FALSE(select(l.model, good, 32, {}, o).verdicts[0].cached);
  EXPECT_TRUE(select(l.model, good, 32, {}, o).verdicts[0].cached);
  // A failing verdict is cached too: the faulty backend is not even started again.
  int bad_calls = 0;
  const Candidate bad[] = {fake(l.model, Fault{4, false, -1}, &bad_calls, "faulty device")};
  EXPECT_NE(select(l.model, bad, 32, {}, o).sequence->backend_name(), "fake-gpu");
  const int after_first = bad_calls;  // the probe and the layer trace of the rejection
  EXPECT_NE(select(l.model, bad, 32, {}, o).sequence->backend_name(), "fake-gpu");
  EXPECT_EQ(bad_calls, after_first);
  std::filesystem::remove_all(dir);
}

// A GPU fault during generation: the request continues on the CPU from the same position with every
// token kept, and ends where a CPU-only run ends.
TEST(Parity, FaultMidGenerationContinuesOnTheCpu) {
  Loaded l("stories260K.gguf");
  std::vector<std::int32_t> ids = {1, 403, 407, 261, 101};
  int calls = 0;
  std::vector<std::string> logged;
  auto s = with_cpu_fallback(l.model, std::make_unique<FakeGpu>(l.model, 64, Fault{SIZE_MAX, false, 4}, &calls),
                             [&](const std::string& line) { logged.push_back(line); });
  Session cpu(l.model, 64);
  s->forward(ids);
  cpu.forward(ids);
  for (int i = 0; i < 10; ++i) {  // greedy, each token from the sequence under test
    const auto& lg = s->logits();
    const auto next = static_cast<std::int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
    ids.push_back(next);
    s->forward(std::span(&ids.back(), 1));
    cpu.forward(std::span(&ids.back(), 1));
    const auto st = test::compare_rows(s->logits().data(), cpu.logits().data(), 1, l.model.config().n_vocab);
    EXPECT_GE(st.min_cos, 0.9999) << "token " << i;
    EXPECT_EQ(st.agree, 1u) << "token " << i;
  }
  EXPECT_EQ(s->pos(), ids.size());
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("continuing on the CPU from position 8"), std::string::npos) << logged[0];
  EXPECT_NE(s->backend_name(), "fake-gpu");
}

// A fault that keeps every position's cosine high but changes the argmax (as a rope fault with angles
// x1.5 did: cosine >= 0.992, argmax 10/16) is rejected by the argmax term; a few flips are tolerated.
TEST(Parity, GoodCosineWithPoorArgmaxAgreementIsRejected) {
  Loaded l("stories260K.gguf");
  int calls = 0;
  const Candidate flipped[] = {fake(l.model, Fault{.perturb_from = 4, .swap_top2 = true}, &calls)};
  const Selection s = select(l.model, flipped, 32, {}, GateOptions{});
  ASSERT_EQ(s.verdicts.size(), 1u);
  const Verdict& v = s.verdicts[0];
  std::printf("%s\n", v.summary().c_str());
  EXPECT_GE(v.min_cosine, kMinCosine) << "the cosine alone would pass";
  EXPECT_FALSE(v.passed);
  EXPECT_NE(s.sequence->backend_name(), "fake-gpu");
  EXPECT_NE(v.reason.find("argmax agreement 4/16 < 0.75 of positions (first difference at position 4"), std::string::npos) << v.reason;
  const Candidate few[] = {fake(l.model, Fault{.perturb_from = 13, .swap_top2 = true}, &calls)};
  const Selection ok = select(l.model, few, 32, {}, GateOptions{});
  EXPECT_TRUE(ok.verdicts.at(0).passed) << ok.line;
  EXPECT_EQ(ok.verdicts[0].argmax_agree, 13u);
}

// A fake GPU whose layer 2 ffn_out goes wrong from position 6: the gate's reason and the layer trace
// name that layer, tensor and position, with everything computed before it matching.
TEST(Parity, LayerTraceNamesTheFirstDivergingLayerAndTensor) {
  Loaded l("stories260K.gguf");
  int calls = 0;
  const Candidate c[] = {fake(l.model, Fault{.perturb_from = 6, .layer = 2}, &calls)};
  const Selection s = select(l.model, c, 32, {}, GateOptions{});
  std::printf("%s\n", s.line.c_str());
  EXPECT_FALSE(s.verdicts.at(0).passed);
  EXPECT_NE(s.verdicts[0].reason.find("first divergence: layer 2 ffn_out at position 6 (cosine -1.00000"), std::string::npos)
      << s.verdicts[0].reason;

  const std::vector<LayerTrace> traces = check_layers(l.model, c, {});
  ASSERT_EQ(traces.size(), 1u);
  const LayerTrace& t = traces[0];
  EXPECT_TRUE(t.error.empty()) << t.error;
  ASSERT_TRUE(t.first.has_value()) << t.summary();
  EXPECT_EQ(t.first->layer, 2);
  EXPECT_EQ(t.first->tensor, "ffn_out");
  EXPECT_EQ(t.first->pos, 6u);
  const std::size_t per_layer = std::size(kLayerTensors);
  ASSERT_EQ(t.tensors.size(), 1 + l.model.config().n_layer * per_layer + 2);
  const std::size_t at = 1 + 2 * per_layer + 10;  // token_embd, layers 0 and 1, then layer 2's ffn_out
  ASSERT_EQ(t.tensors[at].tensor, "ffn_out");
  for (std::size_t i = 0; i < t.tensors.size(); ++i) {
    const std::string what = tensor_label(t.tensors[i].layer, t.tensors[i].tensor);
    if (i < at)
      EXPECT_GE(t.tensors[i].cosine, 0.99999) << what;
    else
      EXPECT_LT(t.tensors[i].cosine, kTensorMinCosine) << what;
  }

  const Candidate good[] = {fake(l.model, {}, &calls)};
  const LayerTrace g = check_layers(l.model, good, {}).at(0);
  EXPECT_FALSE(g.first.has_value()) << g.summary();
  EXPECT_NE(g.summary().find("no intermediate below"), std::string::npos) << g.summary();
}

// NaN logits on the CPU side of the probe are the model's fault: the gate says where instead of
// blaming the backend.
TEST(Parity, NonFiniteCpuProbeNamesTheTensorInsteadOfBlamingTheBackend) {
  const auto bytes = test::damaged_gguf(test::testdata_dir() + "/models/stories260K.gguf", "blk.1.attn_q.weight", 0,
                                        std::numeric_limits<float>::quiet_NaN());
  const auto file = gguf::File::parse(bytes, "damaged.gguf");
  const Model model(file, Config::from_gguf(file));
  int calls = 0;
  const Candidate c[] = {fake(model, {}, &calls)};
  try {
    select(model, c, 32, {}, GateOptions{});
    ADD_FAILURE() << "no error";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("the parity probe's CPU pass has non-finite logits at position 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is layer 1 q (1 of 64 values"), std::string::npos) << e.what();
  }
}

// The real CUDA backend passes the gate on every test model (label gpu; a visible skip elsewhere). The
// injected kernel faults (TRUENO_CUDA_DEFINES=TRUENO_FAULT_ROPE=1 or TRUENO_FAULT_GEMV_SKIP=1, compiled
// into the kernels) need a fresh process each: docs/CUDA.md records their `realizar parity` runs.
TEST(CudaGpuParity, GatePassesCudaOnEveryTestModel) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const auto& entry : std::filesystem::directory_iterator(test::testdata_dir() + "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    Loaded l(entry.path().filename().string());
    // CUDA device 0 by name: on a machine with a Vulkan driver too the automatic list also has Vulkan.
    const auto candidates = gpu_candidates(l.model, CudaOptions{}, trueno::Device{trueno::DeviceKind::CUDA, 0});
    ASSERT_EQ(candidates.size(), 1u);
    const Selection s = select(l.model, candidates, 64, {}, GateOptions{});
    std::printf("%s: %s\n", entry.path().filename().c_str(), s.line.c_str());
    EXPECT_TRUE(s.verdicts.at(0).passed) << entry.path() << ": " << s.line;
    EXPECT_EQ(s.sequence->backend_name(), "cuda");
  }
}

// The CUDA sequence's recorded intermediates (eager decode steps, Note [Intermediates]) match the CPU's
// on every test model: every tensor recorded, none below kTensorMinCosine (label gpu; a visible skip elsewhere).
TEST(CudaGpuParity, LayerTraceFindsNoDivergenceOnEveryTestModel) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const auto& entry : std::filesystem::directory_iterator(test::testdata_dir() + "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    Loaded l(entry.path().filename().string());
    const auto probe = probe_tokens(l.model, {});
    const auto s = test::make_cuda_sequence(l.model, probe.size());
    const LayerTrace t = trace_layers(l.model, "cuda", *s, probe);
    std::printf("%s: %s\n", entry.path().filename().c_str(), t.summary().c_str());
    EXPECT_TRUE(t.error.empty()) << entry.path() << ": " << t.error;
    EXPECT_FALSE(t.first.has_value()) << entry.path() << ": " << t.summary();
    EXPECT_EQ(t.tensors.size(), 1 + l.model.config().n_layer * std::size(kLayerTensors) + 2) << entry.path();
    EXPECT_EQ(s->pos(), 0u) << "the trace leaves the sequence empty";
  }
}

}  // namespace
}  // namespace realizar::parity

namespace realizar::parity {
namespace {

// The real Vulkan backend passes the gate on every test model (label gpu; forced by name, since lavapipe,
// CI's device, is a CPU device that the automatic gate skips).
TEST(VulkanGpuParity, GatePassesVulkanOnEveryTestModel) {
  std::string why;
  if (!test::vulkan_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no Vulkan device: " << why;
  for (const auto& entry : std::filesystem::directory_iterator(test::testdata_dir() + "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    Loaded l(entry.path().filename().string());
    const auto candidates = gpu_candidates(l.model, CudaOptions{}, test::vulkan_test_device());
    ASSERT_EQ(candidates.size(), 1u);
    const Selection s = select(l.model, candidates, 64, {}, GateOptions{});
    std::printf("%s: %s\n", entry.path().filename().c_str(), s.line.c_str());
    EXPECT_TRUE(s.verdicts.at(0).passed) << entry.path() << ": " << s.line;
    EXPECT_EQ(s.sequence->backend_name().rfind("vulkan", 0), 0u) << s.sequence->backend_name();
  }
}

// The faulty shader builds (TRUENO_VULKAN_FAULT, Note [Vulkan fault injection] in src/vulkan/context.cpp)
// are rejected by the gate, which then chooses the CPU; the verdict names where the logits diverged.
TEST(VulkanGpuParity, GateRejectsInjectedShaderFaults) {
  std::string why;
  if (!test::vulkan_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no Vulkan device: " << why;
  Loaded l("tiny-llama-q4_k_m.gguf");
  for (const char* fault : {"rope", "gemv"}) {
    ::setenv("TRUENO_VULKAN_FAULT", fault, 1);
    try {
      const auto candidates = gpu_candidates(l.model, CudaOptions{}, test::vulkan_test_device());
      ASSERT_EQ(candidates.size(), 1u);
      EXPECT_NE(candidates[0].identity.find(std::string("fault ") + fault), std::string::npos) << candidates[0].identity;
      const Selection s = select(l.model, candidates, 64, {}, GateOptions{});
      std::printf("fault %s: %s\n", fault, s.line.c_str());
      EXPECT_FALSE(s.verdicts.at(0).passed) << fault;
      EXPECT_EQ(s.sequence->backend_name().rfind("vulkan", 0), std::string::npos) << fault << ": the CPU must be chosen";
    } catch (...) {
      ::unsetenv("TRUENO_VULKAN_FAULT");
      throw;
    }
    ::unsetenv("TRUENO_VULKAN_FAULT");
  }
}

}  // namespace
}  // namespace realizar::parity
