// The CPU decode step's packed Q4_K and Q6_K matrices (Note [Packed CPU weights], realizar/model.h).
#include <cstdlib>
#include <string_view>
#include <utility>

#include "realizar/model.h"
#include "trueno/log.h"
#include "trueno/threads.h"
#include "util/strcat.h"

namespace realizar {
namespace {

bool repack_enabled() {
  const char* e = std::getenv("REALIZAR_REPACK");
  return e == nullptr || std::string_view(e) != "0";
}

std::unique_ptr<PackedWeights> pack(const Model& m) {
  auto pw = std::make_unique<PackedWeights>();
  pw->layers.resize(m.layers.size());
  std::vector<std::pair<const Matrix*, std::optional<trueno::PackedQuantMatrix>*>> jobs;
  const auto want = [&](const Matrix& w, std::optional<trueno::PackedQuantMatrix>& slot) {
    if (trueno::has_fast_x8(w.type)) jobs.emplace_back(&w, &slot);
  };
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const LayerWeights& lw = m.layers[l];
    PackedWeights::Layer& pl = pw->layers[l];
    want(lw.wq, pl.wq), want(lw.wk, pl.wk), want(lw.wv, pl.wv), want(lw.wo, pl.wo);
    want(lw.gate, pl.gate), want(lw.up, pl.up), want(lw.down, pl.down);
  }
  want(m.output, pw->output);
  if (jobs.empty()) return nullptr;
  trueno::parallel_for(jobs.size(), [&](std::size_t i) {
    const Matrix& w = *jobs[i].first;
    *jobs[i].second = trueno::PackedQuantMatrix::pack(w.type, w.data, w.rows, w.cols);
  });
  for (const auto& [w, slot] : jobs)
    if (*slot) pw->bytes += (*slot)->packed().size();
  trueno::log(trueno::LogLevel::Info, strcat("CPU decode: ", jobs.size(), " Q4_K/Q6_K matrices packed 8 rows at a time, ",
                                             pw->bytes >> 20, " MiB beside the mapped file (REALIZAR_REPACK=0: off)"));
  return pw;
}

}  // namespace

const PackedWeights* Model::cpu_packed() const {
  std::call_once(packed_->once, [this] {
    if (repack_enabled()) packed_->weights = pack(*this);
  });
  return packed_->weights.get();
}

}  // namespace realizar
