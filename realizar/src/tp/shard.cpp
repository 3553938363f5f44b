// Splitting a model's weights across tensor-parallel ranks (Note [Tensor-parallel forward], shard.h).
#include "tp/shard.h"

#include <algorithm>
#include <cstring>

#include "trueno/error.h"
#include "trueno/quant.h"
#include "util/strcat.h"

namespace realizar {
namespace {

// The FFN units move between ranks in whole blocks of the down matrices' columns: the largest block
// size among the layers' down matrices, when every other divides it (1, 32, 256 do), else 0.
std::size_t ffn_quantum(const Model& m) {
  std::size_t q = 1;
  for (const LayerWeights& lw : m.layers) q = std::max(q, trueno::quant_info(lw.down.type).block_elems);
  for (const LayerWeights& lw : m.layers)
    if (q % trueno::quant_info(lw.down.type).block_elems != 0) return 0;
  return q;
}

// Note [Uneven FFN split]
// The FFN width need not divide by N: rank r gets whole quanta (ffn_quantum), the first (quanta % N)
// ranks one more, e.g. Llama 2 7B's 11008 = 43 x 256 as 22 + 21 blocks on 2 ranks. Each rank's units are
// contiguous, so gate/up stay row views and down a column slice on block boundaries; a rank's
// configuration counts its own units. Heads stay even (every rank the same attention work).
struct FfnRange {
  std::size_t first, count;
};

FfnRange ffn_range(std::size_t n_ff, std::size_t quantum, std::size_t n, std::size_t r) {
  const std::size_t quanta = n_ff / quantum, base = quanta / n, extra = quanta % n;
  return {(r * base + std::min(r, extra)) * quantum, (base + (r < extra ? 1 : 0)) * quantum};
}

// "" when a row-parallel matrix's n columns split into n_ranks whole-block slices.
std::string columns_refusal(const std::string& name, const Matrix& w, std::size_t n_ranks) {
  const std::size_t per = w.cols / n_ranks, block = trueno::quant_info(w.type).block_elems;
  if (per % block == 0) return {};
  return strcat(name, " (", trueno::quant_info(w.type).name, ") would split its ", w.cols, " columns into ", per,
                " per rank, not a whole number of ", block, "-value quantization blocks");
}

}  // namespace

std::string tensor_parallel_refusal(const Model& m, int n_ranks) {
  const Config& c = m.config();
  if (n_ranks < 1) return strcat("tensor parallelism needs at least 1 rank, not ", n_ranks);
  const std::size_t n = static_cast<std::size_t>(n_ranks);
  const std::string pre = strcat("cannot split this model ", n, " ways: ");
  if (c.n_head % n != 0) return strcat(pre, c.n_head, " attention heads do not divide among ", n, " ranks");
  if (c.n_head_kv % n != 0 && n % c.n_head_kv != 0)
    return strcat(pre, c.n_head_kv, " KV heads neither divide among ", n, " ranks nor replicate evenly (", n,
                  " is not a multiple of ", c.n_head_kv, ")");
  const std::size_t slice = (c.n_vocab + n - 1) / n;  // every rank's vocabulary rows but the last's
  if ((n - 1) * slice >= c.n_vocab)
    return strcat(pre, "a vocabulary of ", c.n_vocab, " rows in slices of ", slice, " leaves the last rank none");
  for (std::size_t l = 0; l < m.layers.size(); ++l)
    if (const auto why = columns_refusal(strcat("blk.", l, ".attn_output.weight"), m.layers[l].wo, n); !why.empty()) return pre + why;
  const std::size_t q = ffn_quantum(m);
  if (q == 0) return strcat(pre, "the ffn_down matrices' quantization blocks do not nest (no common split of the FFN width)");
  if (c.n_ff % q != 0 || c.n_ff / q < n)
    return strcat(pre, "the FFN width ", c.n_ff, " is ", c.n_ff / q, " whole ", q, "-value blocks of ffn_down, fewer than ", n, " ranks");
  return {};
}

namespace {

// Rows [first, first + count) of w: a view, rows being contiguous.
Matrix row_slice(const Matrix& w, std::size_t first, std::size_t count) {
  const std::size_t rb = trueno::quant_row_bytes(w.type, w.cols);
  return {w.type, w.data.subspan(first * rb, count * rb), count, w.cols};
}

std::vector<float> part(const std::vector<float>& v, std::size_t first, std::size_t count) {
  if (v.empty()) return {};
  return {v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

}  // namespace

Matrix TpShards::column_slice(const Matrix& w, std::size_t first_col, std::size_t n_cols) {
  const std::size_t rb = trueno::quant_row_bytes(w.type, w.cols);
  const std::size_t skip = first_col == 0 ? 0 : trueno::quant_row_bytes(w.type, first_col);
  const std::size_t keep = trueno::quant_row_bytes(w.type, n_cols);
  auto& buf = owned_.emplace_back(w.rows * keep);
  for (std::size_t r = 0; r < w.rows; ++r) std::memcpy(buf.data() + r * keep, w.data.data() + r * rb + skip, keep);
  return {w.type, std::span<const std::byte>(buf.data(), buf.size()), w.rows, n_cols};
}

RankShard TpShards::make_rank(int rank) {
  const Config& c = m_.config();
  const std::size_t n = n_, r = static_cast<std::size_t>(rank), hd = c.head_dim;
  const std::size_t heads = c.n_head / n, kv_heads = c.n_head_kv >= n ? c.n_head_kv / n : 1;  // Note [Tensor-parallel forward]
  const std::size_t group = c.n_head / c.n_head_kv, kv_first = r * heads / group;
  const FfnRange ff = ffn_range(c.n_ff, ffn_quantum(m_), n, r);  // Note [Uneven FFN split]
  Config rc = c;
  rc.n_head = static_cast<std::uint32_t>(heads);
  rc.n_head_kv = static_cast<std::uint32_t>(kv_heads);
  rc.n_ff = static_cast<std::uint32_t>(ff.count);
  RankShard out;
  out.model = std::make_unique<Model>(m_.file(), rc, Model::Unloaded{});
  Model& sm = *out.model;
  out.vocab_begin = r * vocab_slice_;
  const std::size_t vocab_rows = std::min(vocab_slice_, c.n_vocab - out.vocab_begin);
  sm.token_embd = row_slice(m_.token_embd, out.vocab_begin, vocab_rows);
  sm.output = row_slice(m_.output, out.vocab_begin, vocab_rows);
  sm.output_norm = m_.output_norm;
  sm.rope_freqs = m_.rope_freqs;
  for (const LayerWeights& lw : m_.layers) {
    LayerWeights w;
    w.attn_norm = lw.attn_norm, w.ffn_norm = lw.ffn_norm;
    w.wq = row_slice(lw.wq, r * heads * hd, heads * hd);
    w.wk = row_slice(lw.wk, kv_first * hd, kv_heads * hd);
    w.wv = row_slice(lw.wv, kv_first * hd, kv_heads * hd);
    w.bq = part(lw.bq, r * heads * hd, heads * hd);
    w.bk = part(lw.bk, kv_first * hd, kv_heads * hd);
    w.bv = part(lw.bv, kv_first * hd, kv_heads * hd);
    w.wo = column_slice(lw.wo, r * heads * hd, heads * hd);
    w.gate = row_slice(lw.gate, ff.first, ff.count);
    w.up = row_slice(lw.up, ff.first, ff.count);
    w.down = column_slice(lw.down, ff.first, ff.count);
    sm.layers.push_back(std::move(w));
  }
  return out;
}

TpShards::TpShards(const Model& m, int n_ranks) : m_(m) {
  if (std::string why = tensor_parallel_refusal(m, n_ranks); !why.empty()) throw trueno::InvalidArgument(why);
  const std::size_t n = static_cast<std::size_t>(n_ranks), V = m.config().n_vocab;
  n_ = n, vocab_slice_ = (V + n - 1) / n;
  ranks_.reserve(n);
  for (int r = 0; r < n_ranks; ++r) ranks_.push_back(make_rank(r));
}

std::shared_ptr<const TpShards> shard_model(const Model& m, int n_ranks) { return std::make_shared<TpShards>(m, n_ranks); }

}  // namespace realizar
