// A model's weights split across tensor-parallel ranks (realizar/tensor_parallel.h).
//
// Note [Tensor-parallel forward]
// Megatron-style, N ranks, every rank running the CPU forward pass (model/forward_rows.h) on its shard:
//   Q, K, V, gate, up: column-parallel (split by output rows of W [rows][cols]): rank r holds heads
//     [r H/N, (r+1) H/N), their KV heads, and FFN units [r F/N, (r+1) F/N); rows are contiguous in the
//     file, so these are views into the mapping. Attention needs nothing from other ranks: a head reads
//     only its own KV head. When N > KV heads (N a multiple of them), each KV head is replicated on the
//     N / n_kv ranks whose query heads use it (as vLLM does), so a rank holds exactly one KV head.
//   O, down: row-parallel (split by input columns): rank r's columns are its heads' / units' slices, a
//     copy per rank (columns are strided in the file), split on whole quantization blocks so that each
//     rank quantizes its slice of the activations exactly as one device does its blocks (Q8_K per 256
//     values, Q8_0 per 32): the partial products are then the same numbers, only summed in another
//     order. One all-reduce (sum) after O and one after down per layer; x, the norms and the residual
//     adds are replicated.
//   token_embd and the LM head: vocabulary-parallel (rows [r S, (r+1) S), S = ceil(V/N)): the embedding
//     lookup is an all-reduce where one rank contributes each row and the others zeros (exact: x + 0 = x);
//     the LM head's logits slices are all-gathered. The LM head is the largest single matrix (vocabulary
//     x width: 128256 x 4096 for Llama 3 8B, 431 MB in Q6_K) and read every token, so splitting it divides that read by
//     N; replicating it would keep N copies and make each rank read all of it. Tied embeddings share one
//     slice.
// The differences from one device are the two all-reduces' summation orders (the loopback sums partial
// products in rank order; one device sums the whole row in its kernel's order): a few ulps per layer,
// measured in tp/tp_test.cpp against the single-device logits.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "model/forward_rows.h"
#include "realizar/model.h"
#include "realizar/tensor_parallel.h"
#include "trueno/aligned.h"

namespace realizar {

// One rank's part: a Model whose configuration counts its heads, KV heads and FFN units (n_vocab stays
// the whole vocabulary: tokens are checked against it), and where its vocabulary rows start.
struct RankShard {
  std::unique_ptr<Model> model;
  std::size_t vocab_begin = 0;
};

class TpShards {
 public:
  TpShards(const Model& m, int n_ranks);  // InvalidArgument naming why m does not split n_ranks ways
  int n_ranks() const { return static_cast<int>(ranks_.size()); }
  const Model& full() const { return m_; }
  const RankShard& rank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  std::size_t vocab_slice() const { return vocab_slice_; }  // S: every rank's rows of the vocabulary, padded

 private:
  Matrix column_slice(const Matrix& w, std::size_t first_col, std::size_t n_cols);
  RankShard make_rank(int r);

  const Model& m_;
  std::size_t n_ = 0, vocab_slice_ = 0;
  std::vector<std::vector<std::byte, trueno::AlignedAllocator<std::byte>>> owned_;  // the row-parallel copies
  std::vector<RankShard> ranks_;
};

}  // namespace realizar
