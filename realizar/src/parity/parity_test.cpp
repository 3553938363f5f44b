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
};

class FakeGpu final : public Sequence {
 public:
  FakeGpu(const Model& m, std::size_t n_ctx, Fault f, int* calls) : s_(m, n_ctx), f_(f), calls_(calls) {}
  std::size_t n_ctx() const override { return s_.n_ctx(); }
  std::size_t pos() const override { return s_.pos(); }
  void reset() override { s_.reset(); }
  std::size_t kv_bytes() const override { return s_.kv_bytes(); }
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override { return "fake-gpu"; }
  void set_recorder(Recorder* r) override { s_.set_recorder(r); }
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override {
    const int call = (*calls_)++;
    if (call == f_.throw_on_call) throw std::runtime_error("fake-gpu: an illegal memory access was encountered (injected)");
    const std::size_t p0 = s_.pos();
    s_.forward(tokens, all_logits);
    logits_.assign(s_.logits().begin(), s_.logits().end());
    const std::size_t rows = all_logits ? tokens.size() : 1, V = logits_.size() / rows;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t pos = all_logits ? p0 + r : p0 + tokens.size() - 1;
      float* row = logits_.data() + r * V;
      if (pos >= f_.perturb_from && (!f_.decode_only || tokens.size() == 1)) std::rotate(row, row + V / 3, row + V);  // someone else's logits
      if (f_.nan && pos == 5) row[7] = std::numeric_limits<float>::quiet_NaN();
    }
  }

 private:
  Session s_;
  Fault f_;
  int* calls_;
  std::vector<float> logits_;
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

// A correct backend is never rejected: on every model in ../shared/testdata/models.
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
  EXPECT_NE(select(l.model, bad, 32, {}, o).sequence->backend_name(), "fake-gpu");
  EXPECT_EQ(bad_calls, kProbeCalls);
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

// The real CUDA backend passes the gate on every test model (label gpu; a visible skip elsewhere). The
// injected kernel faults (TRUENO_CUDA_DEFINES=TRUENO_FAULT_ROPE=1 or TRUENO_FAULT_GEMV_SKIP=1, compiled
// into the kernels) need a fresh process each: docs/CUDA.md records their `realizar parity` runs.
TEST(CudaGpuParity, GatePassesCudaOnEveryTestModel) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const auto& entry : std::filesystem::directory_iterator(test::testdata_dir() + "/models")) {
    if (entry.path().extension() != ".gguf") continue;
    Loaded l(entry.path().filename().string());
    const auto candidates = gpu_candidates(l.model, CudaOptions{});
    ASSERT_EQ(candidates.size(), 1u);
    const Selection s = select(l.model, candidates, 64, {}, GateOptions{});
    std::printf("%s: %s\n", entry.path().filename().c_str(), s.line.c_str());
    EXPECT_TRUE(s.verdicts.at(0).passed) << entry.path() << ": " << s.line;
    EXPECT_EQ(s.sequence->backend_name(), "cuda");
  }
}

}  // namespace
}  // namespace realizar::parity
