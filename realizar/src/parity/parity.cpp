// The parity gate (parity.h).
//
// Note [Parity gate]
// A GPU pass that is fast and wrong is worse than none: a driver JIT once produced uncorrelated logits
// from valid kernels, and only a comparison with the CPU caught it. So before a GPU backend serves a
// model, the CPU pass and the backend run the same probe (the prompt's first 16 tokens, completed by
// fixed ones: the backend takes the first 8 as one batch and the rest one at a time, so its prompt and
// its decode kernels both answer) and their logits are compared at every position, not only the first: bugs that need
// context (rope at later positions, the KV cache, attention over several chunks) show up past position
// 0. A position passes at cosine >= kMinCosine (f64); the backend passes when every position does and
// the argmaxes agree on at least kMinArgmaxAgreement of them (a cosine per position tolerates mild
// corruption: a rope fault with angles x1.5 kept every cosine >= 0.992 and agreed on 10 of 16). A
// rejected backend is traced layer by layer (Note [Layer trace], layers.cpp) to name where it departs. The
// candidate's own sequence runs the probe and is then reset and kept, so the gate costs one short
// prompt on each side, not a second weight upload. Verdicts are cached per (model file, device and
// driver, kernel sources and options, CUDA modes); a failing verdict is cached too, errors that
// prevented a verdict (out of memory, no device) are not.
#include "realizar/parity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/wrapped_sequence.h"
#include "realizar/recorder.h"
#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar::parity {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The CPU's logits of the probe, computed once per selection.
class CpuReference {
 public:
  CpuReference(const Model& m, std::span<const std::int32_t> probe) : m_(m), probe_(probe) {}
  // Non-finite CPU logits are the model's fault, not a backend's: NonFiniteError naming where.
  const std::vector<float>& logits() {
    if (logits_.empty()) {
      Session cpu(m_, probe_.size());
      cpu.forward(probe_, true);
      const std::size_t V = m_.config().n_vocab;
      for (std::size_t t = 0; t < probe_.size(); ++t)
        if (!all_finite(cpu.logits().subspan(t * V, V)))
          throw_non_finite(cpu, probe_.first(t + 1), strcat("the parity probe's CPU pass has non-finite logits at position ", t));
      logits_.assign(cpu.logits().begin(), cpu.logits().end());
    }
    return logits_;
  }
  const Model& model() const { return m_; }

 private:
  const Model& m_;
  std::span<const std::int32_t> probe_;
  std::vector<float> logits_;
};

// Runs the probe on s (then resets it) and compares with the CPU; an error becomes a failed verdict.
Verdict gate(const std::string& name, Sequence& s, std::span<const std::int32_t> probe, CpuReference& cpu, std::size_t V) {
  const std::vector<float>& want = cpu.logits();
  const auto t = Clock::now();
  Verdict v;
  try {
    // The first half as one batch (the prompt path), the rest one token at a time (the decode path):
    // both sets of kernels serve a request, so both are compared.
    const std::size_t split = probe.size() / 2;
    std::vector<float> got;
    s.reset();
    s.forward(probe.first(split), true);
    got.assign(s.logits().begin(), s.logits().end());
    for (std::size_t t = split; t < probe.size(); ++t) {
      s.forward(probe.subspan(t, 1), true);
      got.insert(got.end(), s.logits().begin(), s.logits().end());
    }
    v = compare(name, want.data(), got.data(), probe.size(), V);
    s.reset();
  } catch (const std::exception& e) {
    v.backend = name, v.passed = false, v.reason = strcat("the probe failed: ", e.what());
  }
  if (!v.passed && !v.positions.empty()) v.reason = strcat(v.reason, "; ", trace_layers(cpu.model(), name, s, probe).summary());
  v.seconds = seconds_since(t);
  return v;
}

std::string cache_path(const GateOptions& o, const Candidate& c) {
  if (o.cache_dir.empty() || c.identity.empty() || o.model_identity.empty()) return {};
  return strcat(o.cache_dir, "/", hex(fnv1a(strcat(o.model_identity, "\n", c.name, "\n", c.identity))), ".verdict");
}

// The cache file: "key value" lines; positions as "position pos cosine max_abs argmax_cpu argmax_gpu".
void store(const std::string& path, const Verdict& v) {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << "backend " << v.backend << "\npassed " << v.passed << "\nseconds " << v.seconds << "\n";
    for (const PositionCheck& p : v.positions)
      f << "position " << p.pos << ' ' << p.cosine << ' ' << p.max_abs << ' ' << p.argmax_cpu << ' ' << p.argmax_gpu << "\n";
    f << "reason " << v.reason << "\n";
    if (!f) return;
  }
  std::filesystem::rename(tmp, path, ec);
}

std::optional<Verdict> load(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream f(path);
  if (!f) return std::nullopt;
  Verdict v;
  std::string key, line;
  bool have_passed = false;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    in >> key;
    if (key == "backend") {
      in >> v.backend;
    } else if (key == "passed") {
      in >> v.passed;
      have_passed = !in.fail();
    } else if (key == "seconds") {
      in >> v.seconds;
    } else if (key == "position") {
      PositionCheck p;
      in >> p.pos >> p.cosine >> p.max_abs >> p.argmax_cpu >> p.argmax_gpu;
      if (in.fail()) return std::nullopt;  // a damaged entry: run the gate again
      v.positions.push_back(p);
    } else if (key == "reason") {
      std::getline(in >> std::ws, v.reason);
    }
  }
  if (!have_passed || v.backend.empty()) return std::nullopt;
  if (!v.positions.empty()) {
    v.min_cosine = 1, v.max_abs = 0, v.argmax_agree = 0;
    for (const PositionCheck& p : v.positions) {
      v.min_cosine = std::min(v.min_cosine, p.cosine), v.max_abs = std::max(v.max_abs, p.max_abs);
      v.argmax_agree += p.argmax_cpu == p.argmax_gpu;
    }
  }
  v.cached = true;
  return v;
}

void say(const GateOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

}  // namespace

std::string Verdict::summary() const {
  const std::string timing = strcat(fixed(seconds, 2), " s", cached ? ", cached verdict" : "");
  if (passed)
    return strcat(backend, " passed: min cosine ", fixed(min_cosine, 5), " over ", positions.size(), " positions, argmax ", argmax_agree,
                  "/", positions.size(), ", ", timing);
  return strcat(backend, " rejected: ", reason, " (", timing, ")");
}

std::vector<std::int32_t> probe_tokens(const Model& m, std::span<const std::int32_t> prompt) {
  const std::size_t V = m.config().n_vocab;
  std::vector<std::int32_t> ids(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(std::min(prompt.size(), kProbePositions)));
  for (std::size_t i = ids.size(); i < kProbePositions; ++i)
    ids.push_back(static_cast<std::int32_t>(i == 0 ? 1 % V : (i * 7919 + 13) % V));
  return ids;
}

Verdict compare(const std::string& backend, const float* cpu, const float* gpu, std::size_t T, std::size_t V) {
  Verdict v;
  v.backend = backend;
  v.min_cosine = 1;
  const PositionCheck* worst = nullptr;
  std::size_t non_finite_at = SIZE_MAX;
  for (std::size_t t = 0; t < T; ++t) {
    const float* a = cpu + t * V;
    const float* b = gpu + t * V;
    PositionCheck p;
    p.pos = t;
    double dot = 0, na = 0, nb = 0;
    std::size_t ia = 0, ib = 0;
    bool finite = true;
    for (std::size_t k = 0; k < V; ++k) {
      finite = finite && std::isfinite(b[k]);
      dot += double{a[k]} * b[k], na += double{a[k]} * a[k], nb += double{b[k]} * b[k];
      p.max_abs = std::max(p.max_abs, static_cast<double>(std::fabs(a[k] - b[k])));
      if (a[k] > a[ia]) ia = k;
      if (b[k] > b[ib]) ib = k;
    }
    // A non-finite or all-zero row is not a match, whatever the arithmetic says.
    if (!finite && non_finite_at == SIZE_MAX) non_finite_at = t;
    p.cosine = finite && na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
    if (!std::isfinite(p.cosine)) p.cosine = 0;
    p.argmax_cpu = static_cast<std::int32_t>(ia), p.argmax_gpu = static_cast<std::int32_t>(ib);
    v.positions.push_back(p);
  }
  for (const PositionCheck& p : v.positions) {
    if (worst == nullptr || p.cosine < worst->cosine) worst = &p;
    v.min_cosine = std::min(v.min_cosine, p.cosine), v.max_abs = std::max(v.max_abs, p.max_abs);
    v.argmax_agree += p.argmax_cpu == p.argmax_gpu;
  }
  const bool argmax_ok = static_cast<double>(v.argmax_agree) >= kMinArgmaxAgreement * static_cast<double>(T);
  v.passed = T >= kMinPositions && v.min_cosine >= kMinCosine && argmax_ok;
  if (T < kMinPositions) {
    v.reason = strcat("only ", T, " positions compared (at least ", kMinPositions, ")");
  } else if (non_finite_at != SIZE_MAX) {
    v.reason = strcat("non-finite logits at position ", non_finite_at, " (argmax agreement ", v.argmax_agree, "/", T, ")");
  } else if (v.min_cosine < kMinCosine) {
    v.reason = strcat("cosine ", fixed(worst->cosine, 5), " < ", kMinCosine, " at position ", worst->pos, " (argmax cpu ", worst->argmax_cpu,
                      ", ", backend, " ", worst->argmax_gpu, "; max |d| ", fixed(v.max_abs, 4), "; argmax agreement ", v.argmax_agree, "/", T,
                      ")");
  } else if (!argmax_ok) {
    const auto differs = std::find_if(v.positions.begin(), v.positions.end(), [](const PositionCheck& p) { return p.argmax_cpu != p.argmax_gpu; });
    v.reason = strcat("argmax agreement ", v.argmax_agree, "/", T, " < ", kMinArgmaxAgreement, " of positions (first difference at position ",
                      differs->pos, ": cpu ", differs->argmax_cpu, ", ", backend, " ", differs->argmax_gpu, "; min cosine ",
                      fixed(v.min_cosine, 5), ")");
  }
  return v;
}

Selection select(const Model& m, std::span<const Candidate> candidates, std::size_t n_ctx, std::span<const std::int32_t> prompt,
                 const GateOptions& o) {
  const std::vector<std::int32_t> probe = probe_tokens(m, prompt);
  CpuReference cpu(m, probe);
  const std::size_t V = m.config().n_vocab;
  Selection out;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    const bool forced = o.forced && i == 0;
    std::unique_ptr<Sequence> s;
    const auto make = [&]() -> bool {
      try {
        s = c.make(std::max(n_ctx, probe.size()));
        return true;
      } catch (const std::exception& e) {
        if (forced) throw;
        Verdict v;
        v.backend = c.name, v.reason = strcat("could not start: ", e.what());
        say(o, v.summary());
        out.verdicts.push_back(std::move(v));
        return false;
      }
    };
    if (o.skip) {
      if (!make()) continue;
      out.sequence = std::move(s);
      out.line = strcat(c.name, " (parity gate skipped by --no-parity-gate: its logits are not checked against the CPU)");
      return out;
    }
    const std::string path = o.recheck ? std::string{} : cache_path(o, c);
    if (const auto cached = load(path)) {
      if (cached->passed || forced) {
        if (!make()) continue;
        out.verdicts.push_back(*cached);
        out.sequence = std::move(s);
        out.line = cached->passed ? cached->summary()
                                  : strcat(cached->summary(), "; used anyway because --backend ", c.name, " forces it");
        return out;
      }
      say(o, cached->summary());
      out.verdicts.push_back(*cached);
      continue;
    }
    if (!make()) continue;
    Verdict v = gate(c.name, *s, probe, cpu, V);
    if (!v.positions.empty()) store(o.recheck ? cache_path(o, c) : path, v);
    out.verdicts.push_back(v);
    if (v.passed || forced) {
      out.sequence = std::move(s);
      out.line = v.passed ? v.summary() : strcat(v.summary(), "; used anyway because --backend ", c.name, " forces it");
      return out;
    }
    say(o, v.summary());
    s.reset();  // released before the next candidate: its device memory is freed
  }
  out.sequence = std::make_unique<Session>(m, n_ctx);
  std::string why;
  for (const Verdict& v : out.verdicts) why += strcat(why.empty() ? "" : "; ", v.summary());
  out.line = strcat(out.sequence->backend_name(), why.empty() ? " (no GPU backend available)" : strcat(" (", why, ")"));
  return out;
}

std::vector<Verdict> check_all(const Model& m, std::span<const Candidate> candidates, std::span<const std::int32_t> prompt) {
  const std::vector<std::int32_t> probe = probe_tokens(m, prompt);
  CpuReference cpu(m, probe);
  std::vector<Verdict> out;
  for (const Candidate& c : candidates) {
    std::unique_ptr<Sequence> s;
    try {
      s = c.make(probe.size());
    } catch (const std::exception& e) {
      Verdict v;
      v.backend = c.name, v.reason = strcat("could not start: ", e.what());
      out.push_back(std::move(v));
      continue;
    }
    out.push_back(gate(c.name, *s, probe, cpu, m.config().n_vocab));
  }
  return out;
}

std::string model_identity(const gguf::File& file) {
  std::string text = strcat(file.path(), "\n", file.file_size(), "\n");
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(file.path(), ec);
  if (!ec) text += strcat(static_cast<long long>(mtime.time_since_epoch().count()), "\n");  // an __int128 count in libc++
  for (const gguf::TensorInfo& t : file.tensors()) {
    text += strcat(t.name, ' ', static_cast<int>(t.type), ' ', t.bytes, ' ', t.offset);
    for (const auto n : t.ne) text += strcat(' ', n);
    text += '\n';
  }
  return hex(fnv1a(text));
}

std::vector<Candidate> gpu_candidates(const Model& m, const CudaOptions& cuda, std::optional<trueno::Device> only) {
  std::vector<Candidate> out;
  for (const trueno::DeviceStatus& st : trueno::device_report()) {  // in the backend list's order
    if (!st.available) continue;
    const trueno::Device d = st.device;
    if (only && d != *only) continue;
    if (!only && !st.automatic) continue;  // a CPU-type Vulkan device (lavapipe): only when forced by name
    if (!has_forward(d.kind)) continue;
    out.push_back({d.index == 0 ? std::string(trueno::name(d.kind)) : d.str(), device_identity(d, cuda),
                   [&m, cuda, d](std::size_t n_ctx) { return make_sequence(m, n_ctx, d, cuda); }});
  }
  return out;
}

namespace {

class FallbackSequence final : public WrappedSequence {
 public:
  FallbackSequence(const Model& m, std::unique_ptr<Sequence> primary, std::function<void(const std::string&)> log)
      : WrappedSequence(std::move(primary)), m_(m), log_(std::move(log)) {}
  void set_recorder(Recorder* r) override {
    recorder_ = r;
    s_->set_recorder(r);
  }
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override {
    try {
      s_->forward(tokens, all_logits);
    } catch (const trueno::InvalidArgument&) {
      throw;  // the caller's mistake (a token outside the vocabulary, a full context): not a GPU fault
    } catch (const std::exception& e) {
      fall_back(e);
      s_->forward(tokens, all_logits);
    }
    history_.insert(history_.end(), tokens.begin(), tokens.end());
  }
  // A device's sampling kernels may fail too. The sampler's generator draws only after the device's part,
  // so the CPU's pick from the replayed history is the token the device would have picked.
  std::int32_t sample(Sampler& s, std::span<const std::int32_t> history) override {
    try {
      return s_->sample(s, history);
    } catch (const trueno::InvalidArgument&) {
      throw;
    } catch (const std::exception& e) {
      fall_back(e);
      return s_->sample(s, history);
    }
  }

 private:
  // Called in a handler of e: rethrows it when already on the CPU, else replaces the device sequence by a
  // CPU one that has run every token fed so far.
  void fall_back(const std::exception& e) {
    if (fell_back_) throw;
    fell_back_ = true;
    const std::string from = s_->backend_name();
    if (log_) log_(strcat(from, " failed (", e.what(), "); continuing on the CPU from position ", history_.size()));
    auto cpu = std::make_unique<Session>(m_, s_->n_ctx());
    s_.reset();  // frees the GPU's memory before the CPU pass allocates its own
    if (!history_.empty()) cpu->forward(history_, false);
    cpu->set_recorder(recorder_);
    s_ = std::move(cpu);
  }

  const Model& m_;
  std::function<void(const std::string&)> log_;
  bool fell_back_ = false;
  Recorder* recorder_ = nullptr;
};

}  // namespace

std::unique_ptr<Sequence> with_cpu_fallback(const Model& m, std::unique_ptr<Sequence> primary, std::function<void(const std::string&)> log) {
  return std::make_unique<FallbackSequence>(m, std::move(primary), std::move(log));
}

}  // namespace realizar::parity
