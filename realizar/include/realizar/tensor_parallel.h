// Tensor parallelism (docs/MULTI_GPU.md): a model split across N ranks, Megatron-style, each rank holding
// its attention heads, its FFN columns and its vocabulary rows. On the CPU the ranks are threads joined
// by the loopback communicator (trueno/comm.h): the sharding math checked without GPUs.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "realizar/model.h"

namespace realizar {

class TpShards;  // tp/shard.h: every rank's shard of one model

// "" when m splits across n_ranks ranks, else the reason: the heads, KV heads or FFN width that does not
// divide, or a row-parallel matrix whose per-rank columns are not whole quantization blocks.
std::string tensor_parallel_refusal(const Model& m, int n_ranks);

// Every rank's shard of m (views into the mapped file where a rank's part is contiguous, copies of the
// row-parallel matrices' column slices); InvalidArgument with tensor_parallel_refusal's reason.
std::shared_ptr<const TpShards> shard_model(const Model& m, int n_ranks);

// A sequence whose forward runs on the shards' ranks as threads of this process (the loopback group):
// its logits are the single-device CPU pass's within the summation-order differences of the two
// all-reduces per layer (Note [Tensor-parallel forward], tp/shard.h). The shards must outlive nothing:
// the sequence keeps them alive.
std::unique_ptr<Sequence> make_tp_sequence(std::shared_ptr<const TpShards> shards, std::size_t n_ctx);
// A batched step over sequences made by make_tp_sequence from these shards (Batch::step's contract):
// a sequence's logits are the same stepping alone or in any batch, bit for bit.
std::unique_ptr<Batch> make_tp_batch(std::shared_ptr<const TpShards> shards);

}  // namespace realizar
