// The paged KV pool and a sequence's block table (kv_cache.h).
#include "realizar/kv_cache.h"

#include <algorithm>

#include "realizar/model.h"
#include "trueno/ops.h"
#include "util/strcat.h"

namespace realizar {

KvPool::KvPool(const Config& c, std::size_t block_positions, std::size_t n_blocks)
    : block_(block_positions), n_blocks_(n_blocks), n_layer_(c.n_layer), row_(std::size_t{c.n_head_kv} * c.head_dim) {
  if (block_positions == 0 || n_blocks == 0)
    throw trueno::InvalidArgument(strcat("kv pool: ", n_blocks, " blocks of ", block_positions, " positions: both must be at least 1"));
  const std::size_t n = n_blocks * n_layer_ * block_ * row_;
  k_.assign(n, 0), v_.assign(n, 0);  // std::bad_alloc: the CLI reports it with the sizes (cli/context.cpp)
  free_.resize(n_blocks);
  for (std::size_t i = 0; i < n_blocks; ++i) free_[i] = static_cast<std::uint32_t>(n_blocks - 1 - i);  // block 0 first
}

std::size_t KvPool::free_blocks() const {
  std::lock_guard lock(mu_);
  return free_.size();
}

void KvPool::give_back(const std::vector<std::uint32_t>& blocks) {
  std::lock_guard lock(mu_);
  free_.insert(free_.end(), blocks.rbegin(), blocks.rend());
}

void KvCache::reserve(std::size_t n) {
  const std::size_t bp = pool_->block_positions();
  const std::size_t need = (n + bp - 1) / bp;
  if (need <= blocks_.size()) return;
  std::lock_guard lock(pool_->mu_);
  const std::size_t more = need - blocks_.size();
  if (more > pool_->free_.size())
    throw OutOfKvBlocks(strcat("kv cache: ", n, " positions need ", need, " blocks of ", bp, "; this sequence has ", blocks_.size(),
                               " and the pool has ", pool_->free_.size(), " free of ", pool_->total_blocks(),
                               " (raise the pool size or finish other sequences)"));
  for (std::size_t i = 0; i < more; ++i) {
    blocks_.push_back(pool_->free_.back());
    pool_->free_.pop_back();
  }
}

void KvCache::release() {
  if (blocks_.empty()) return;
  pool_->give_back(blocks_);
  blocks_.clear();
}

std::size_t KvCache::bytes() const {
  return blocks_.size() * pool_->n_layer_ * pool_->block_ * pool_->row_ * 2 * sizeof(std::uint16_t);
}

std::uint16_t* KvCache::k(std::size_t layer, std::size_t pos) {
  const std::size_t bp = pool_->block_positions();
  return pool_->k_at(blocks_[pos / bp], layer, pos % bp);
}

std::uint16_t* KvCache::v(std::size_t layer, std::size_t pos) {
  const std::size_t bp = pool_->block_positions();
  return pool_->v_at(blocks_[pos / bp], layer, pos % bp);
}

void KvCache::widen(std::size_t layer, std::size_t n, float* kf, float* vf) {
  const std::size_t bp = pool_->block_positions(), row = pool_->row();
  for (std::size_t p = 0; p < n; p += bp) {
    const std::size_t len = std::min(bp, n - p) * row;
    trueno::ops::f16_to_f32(std::span<const std::uint16_t>(k(layer, p), len), std::span(kf + p * row, len));
    trueno::ops::f16_to_f32(std::span<const std::uint16_t>(v(layer, p), len), std::span(vf + p * row, len));
  }
}

}  // namespace realizar
