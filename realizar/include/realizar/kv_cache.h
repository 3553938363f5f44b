// The KV cache as a paged pool (Note [Paged KV cache]): a KvPool of fixed-size blocks of positions, shared
// by the sequences of one model; each sequence's KvCache holds a table of the blocks it uses.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "trueno/error.h"

namespace realizar {

struct Config;

// The pool has no free block left for a sequence that grows; the message gives the sizes.
class OutOfKvBlocks : public trueno::Error {
 public:
  using trueno::Error::Error;
};

// Note [Paged KV cache]
// K and V rows are f16 (Note [F16 attention]) in blocks of `block_positions` positions, each block
// holding every layer: [n_blocks][n_layer][block_positions][n_head_kv * head_dim]. A sequence takes blocks
// as it grows and gives them back when it is released or destroyed, so many sequences of different
// lengths share one allocation without reserving a whole context each (what a server with continuous
// batching needs). Attention widens a sequence's positions block by block into f32, so the arithmetic
// is the contiguous cache's, bit for bit.
class KvPool {
 public:
  // Throws InvalidArgument for a zero block size or count.
  KvPool(const Config& c, std::size_t block_positions, std::size_t n_blocks);
  std::size_t block_positions() const { return block_; }
  std::size_t total_blocks() const { return n_blocks_; }
  std::size_t free_blocks() const;
  std::size_t bytes() const { return (k_.size() + v_.size()) * sizeof(std::uint16_t); }
  std::size_t row() const { return row_; }  // n_head_kv * head_dim

 private:
  friend class KvCache;
  std::uint32_t take(std::size_t need_positions);
  void give_back(const std::vector<std::uint32_t>& blocks);
  std::uint16_t* k_at(std::uint32_t block, std::size_t layer, std::size_t offset) {
    return k_.data() + ((block * n_layer_ + layer) * block_ + offset) * row_;
  }
  std::uint16_t* v_at(std::uint32_t block, std::size_t layer, std::size_t offset) {
    return v_.data() + ((block * n_layer_ + layer) * block_ + offset) * row_;
  }
  std::size_t block_, n_blocks_, n_layer_, row_;
  std::vector<std::uint16_t> k_, v_;
  mutable std::mutex mu_;
  std::vector<std::uint32_t> free_;  // a stack of free block indices
};

// One sequence's view of the pool: positions [0, capacity()) are backed by blocks.
class KvCache {
 public:
  explicit KvCache(std::shared_ptr<KvPool> pool) : pool_(std::move(pool)) {}
  ~KvCache() { release(); }
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  // Backs positions [0, n) with blocks; throws OutOfKvBlocks (nothing taken) when the pool has too few.
  void reserve(std::size_t n);
  // Gives every block back (the sequence starts again at position 0).
  void release();
  std::size_t capacity() const { return blocks_.size() * pool_->block_positions(); }
  std::size_t blocks() const { return blocks_.size(); }
  std::size_t bytes() const;
  const KvPool& pool() const { return *pool_; }

  // Row `pos` of layer `layer` (f16 [row]); pos < capacity().
  std::uint16_t* k(std::size_t layer, std::size_t pos);
  std::uint16_t* v(std::size_t layer, std::size_t pos);
  // Positions [0, n) of layer `layer` widened to f32 [n][row] each.
  void widen(std::size_t layer, std::size_t n, float* kf, float* vf);

 private:
  std::shared_ptr<KvPool> pool_;
  std::vector<std::uint32_t> blocks_;
};

}  // namespace realizar
