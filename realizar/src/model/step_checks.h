// The argument checks a forward call and a batch step make before anything runs, with one wording for
// every backend (CPU, CUDA, Vulkan): a bad call throws InvalidArgument and nothing advances.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "realizar/model.h"
#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar {

// tokens (at least one) at positions pos.. fit n_ctx, each inside the vocabulary.
void check_forward(const Config& c, std::size_t pos, std::size_t n_ctx, std::span<const std::int32_t> tokens);

// One token per sequence; each sequence is of type S and made from these weights (ours(s); `weights`
// names them in the error: "these CUDA weights"), not full, not given twice; each token inside the
// vocabulary. Returns the sequences as S.
template <class S, class Ours>
std::vector<S*> checked_batch(const Config& c, std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens, Ours ours,
                              const char* weights) {
  const std::size_t B = seqs.size();
  if (B != tokens.size()) throw trueno::InvalidArgument(strcat("batch: ", B, " sequences but ", tokens.size(), " tokens"));
  std::vector<S*> s(B);
  for (std::size_t i = 0; i < B; ++i) {
    s[i] = dynamic_cast<S*>(seqs[i]);
    if (s[i] == nullptr || !ours(*s[i]))
      throw trueno::InvalidArgument(strcat("batch: sequence ", i, " (", seqs[i]->backend_name(), ") was not made from ", weights));
    if (s[i]->pos() + 1 > s[i]->n_ctx()) throw trueno::InvalidArgument(strcat("batch: sequence ", i, " is full (", s[i]->n_ctx(), " positions)"));
    if (tokens[i] < 0 || static_cast<std::uint32_t>(tokens[i]) >= c.n_vocab)
      throw trueno::InvalidArgument(strcat("batch: token id ", tokens[i], " is outside the vocabulary [0, ", c.n_vocab, ")"));
    for (std::size_t j = 0; j < i; ++j)
      if (s[j] == s[i]) throw trueno::InvalidArgument(strcat("batch: sequence ", i, " appears twice"));
  }
  return s;
}

// Prompt chunks of a joint prefill: one per sequence, each passing check_forward at its sequence's
// position; sequences of type S made from these weights, none twice. Returns the sequences as S.
template <class S, class Ours>
std::vector<S*> checked_prefill(const Config& c, std::span<Sequence* const> seqs, std::span<const std::span<const std::int32_t>> chunks,
                                Ours ours, const char* weights) {
  const std::size_t B = seqs.size();
  if (B != chunks.size()) throw trueno::InvalidArgument(strcat("batch prefill: ", B, " sequences but ", chunks.size(), " chunks"));
  std::vector<S*> s(B);
  for (std::size_t i = 0; i < B; ++i) {
    s[i] = dynamic_cast<S*>(seqs[i]);
    if (s[i] == nullptr || !ours(*s[i]))
      throw trueno::InvalidArgument(strcat("batch prefill: sequence ", i, " (", seqs[i]->backend_name(), ") was not made from ", weights));
    check_forward(c, s[i]->pos(), s[i]->n_ctx(), chunks[i]);
    for (std::size_t j = 0; j < i; ++j)
      if (s[j] == s[i]) throw trueno::InvalidArgument(strcat("batch prefill: sequence ", i, " appears twice"));
  }
  return s;
}

}  // namespace realizar
