// The CPU forward pass over rows (forward.cpp), shared by the CPU sequence, the CPU batch and the
// tensor-parallel ranks (tp/): one body, so that TP runs the very code whose logits the tests trust.
#pragma once
#include <cstddef>
#include <span>

#include "realizar/model.h"
#include "trueno/comm.h"

namespace realizar {

// What a tensor-parallel rank adds to the forward pass (Note [Tensor-parallel forward], tp/shard.h): its
// model is a shard (its heads, KV heads and FFN columns; its vocabulary rows of the embeddings and LM
// head), and three collectives join the ranks: the embedding rows summed (one rank holds each token's row,
// the others contribute zeros), an all-reduce after the attention output and after the FFN down product
// (row-parallel partial sums), and an all-gather of the logits' vocabulary slices.
struct TpRank {
  trueno::Communicator* comm = nullptr;
  std::size_t vocab_begin = 0;  // this rank's rows of token_embd and output are [vocab_begin, + their rows)
  std::size_t vocab_slice = 0;  // every rank's slice padded to this many rows (the all-gather's count)
  std::size_t n_vocab = 0;      // the whole vocabulary
};

// Logits of rows [first_logits, T) into w.logits [T - first_logits][n_vocab]; the last row's intermediates
// to rec when given (not with tp: a rank sees only its slices). tp: null on one device.
void forward_rows(const Model& m, std::span<const Row> rows, std::size_t first_logits, CpuScratch& w, Recorder* rec,
                  const TpRank* tp = nullptr);

}  // namespace realizar
