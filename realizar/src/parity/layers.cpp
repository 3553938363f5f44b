// The layer trace (parity.h).
//
// Note [Layer trace]
// The gate's logits say that a backend is wrong; the trace says where. The probe goes one token at a
// time through a CPU Session and the candidate, both recording (Note [Intermediates], recorder.cpp), and
// at each position every tensor the CPU records is compared with the candidate's of the same layer and
// name (cosine in f64, max |d|). The first divergence is the earliest position where a tensor falls
// below kTensorMinCosine, and there the first such tensor in the CPU's order of computation: everything
// computed after it inherits the error, so it is where to look. One token at a time because a recording
// holds a call's last token. The gate runs the trace when it rejects a backend whose probe produced
// logits and appends the first divergence to the reason; `realizar parity --layers` prints it all.
#include <cmath>
#include <cstdio>

#include "realizar/parity.h"
#include "realizar/recorder.h"
#include "util/strcat.h"

namespace realizar::parity {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Cosine in f64: 0 when either side is non-finite or only one is all zero, 1 when both are all zero.
double cosine(std::span<const float> a, std::span<const float> b, double* max_abs) {
  double dot = 0, na = 0, nb = 0;
  bool finite = true;
  *max_abs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    finite = finite && std::isfinite(a[i]) && std::isfinite(b[i]);
    dot += double{a[i]} * b[i], na += double{a[i]} * a[i], nb += double{b[i]} * b[i];
    *max_abs = std::max(*max_abs, static_cast<double>(std::fabs(a[i] - b[i])));
  }
  if (!finite) return 0;
  if (na == 0 && nb == 0) return 1;
  if (na == 0 || nb == 0) return 0;
  return dot / std::sqrt(na * nb);
}

}  // namespace

std::string LayerTrace::summary() const {
  std::string s;
  if (first)
    s = strcat("first divergence: ", tensor_label(first->layer, first->tensor), " at position ", first->pos, " (cosine ",
               fixed(first->cosine, 5), " < ", kTensorMinCosine, ", max |d| ", fixed(first->max_abs, 4), ")");
  else if (error.empty())
    s = strcat("no intermediate below cosine ", kTensorMinCosine, " in the traced decode steps");
  if (!error.empty()) s = strcat(s, s.empty() ? "" : "; ", "layer trace: ", error);
  return s;
}

LayerTrace trace_layers(const Model& m, const std::string& backend, Sequence& s, std::span<const std::int32_t> probe) {
  LayerTrace out;
  out.backend = backend;
  Session cpu(m, probe.size());
  Recording want, got;
  cpu.set_recorder(&want);
  struct Restore {  // the candidate leaves as it came: empty, not recording
    Sequence& s;
    ~Restore() {
      s.set_recorder(nullptr);
      s.reset();
    }
  } restore{s};
  s.reset();
  s.set_recorder(&got);
  for (std::size_t p = 0; p < probe.size(); ++p) {
    want.clear(), got.clear();
    cpu.forward(probe.subspan(p, 1));
    try {
      s.forward(probe.subspan(p, 1));
    } catch (const std::exception& e) {
      out.error = strcat(backend, " failed at position ", p, ": ", e.what());
      return out;
    }
    for (std::size_t i = 0; i < want.tensors().size(); ++i) {
      const Recording::Tensor& w = want.tensors()[i];
      const Recording::Tensor* g = got.find(w.layer, w.name);
      if (g == nullptr || g->values.size() != w.values.size()) {
        out.error = strcat(backend, g == nullptr ? " recorded no " : " recorded a different size of ", tensor_label(w.layer, w.name),
                           " at position ", p);
        return out;
      }
      TensorCheck c{w.layer, w.name, p, 0, 0};
      c.cosine = cosine(w.values, g->values, &c.max_abs);
      if (p == 0) out.tensors.push_back(c);
      else if (c.cosine < out.tensors[i].cosine) out.tensors[i] = c;
      if (!out.first && c.cosine < kTensorMinCosine) out.first = c;
    }
  }
  return out;
}

std::vector<LayerTrace> check_layers(const Model& m, std::span<const Candidate> candidates, std::span<const std::int32_t> prompt) {
  const std::vector<std::int32_t> probe = probe_tokens(m, prompt);
  std::vector<LayerTrace> out;
  for (const Candidate& c : candidates) {
    std::unique_ptr<Sequence> s;
    try {
      s = c.make(probe.size());
    } catch (const std::exception& e) {
      LayerTrace t;
      t.backend = c.name, t.error = strcat(c.name, " could not start: ", e.what());
      out.push_back(std::move(t));
      continue;
    }
    out.push_back(trace_layers(m, c.name, *s, probe));
  }
  return out;
}

}  // namespace realizar::parity
