// Sequence's host defaults for picking a token and checking the logits: both read logits().
#include "realizar/model.h"
#include "realizar/recorder.h"
#include "realizar/sampler.h"
#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar {

std::int32_t Sequence::sample(Sampler& s, std::span<const std::int32_t> history) { return s.sample(logits(), history); }

bool Sequence::logits_finite() const { return all_finite(logits()); }

void Batch::prefill(std::span<Sequence* const> seqs, std::span<const std::span<const std::int32_t>> chunks) {
  if (seqs.empty() && chunks.empty()) return;
  if (seqs.size() != chunks.size()) throw trueno::InvalidArgument(strcat("batch prefill: ", seqs.size(), " sequences but ", chunks.size(), " chunks"));
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    if (chunks[i].empty()) throw trueno::InvalidArgument(strcat("batch prefill: chunk ", i, " has no tokens"));
    for (std::size_t j = 0; j < i; ++j)
      if (seqs[j] == seqs[i]) throw trueno::InvalidArgument(strcat("batch prefill: sequence ", i, " appears twice"));
    if (seqs[i]->pos() + chunks[i].size() > seqs[i]->n_ctx())
      throw trueno::InvalidArgument(strcat("batch prefill: sequence ", i, ": ", seqs[i]->pos(), " + ", chunks[i].size(),
                                           " tokens exceed the context size ", seqs[i]->n_ctx()));
  }
  for (std::size_t i = 0; i < seqs.size(); ++i) seqs[i]->forward(chunks[i]);
}

}  // namespace realizar
