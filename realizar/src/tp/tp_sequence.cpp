// The tensor-parallel CPU sequence and batched step: N ranks, one thread each, over the loopback group;
// each rank runs the CPU forward pass (model/forward_rows.h) on its shard, each sequence keeping a KV
// cache per rank (that rank's KV heads only).
#include <atomic>
#include <exception>
#include <thread>

#include "model/forward_rows.h"
#include "model/step_checks.h"
#include "tp/shard.h"
#include "trueno/backend.h"
#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar {
namespace {

// The ranks' communicators, their collective context and their scratch, and the running of one step.
class RankGroup {
 public:
  explicit RankGroup(std::shared_ptr<const TpShards> s) : s_(std::move(s)), w_(static_cast<std::size_t>(s_->n_ranks())),
                                                            rows_(w_.size()), tp_(w_.size()) {
    connect();
  }
  const TpShards& shards() const { return *s_; }
  const std::shared_ptr<const TpShards>& shared() const { return s_; }
  std::size_t size() const { return w_.size(); }
  CpuScratch& scratch(std::size_t r) { return w_[r]; }

  // Runs rows_of(r) (rank r's rows: its caches) through every rank's forward pass at once, one thread a
  // rank; afterwards scratch(r).logits holds the gathered logits of rows [first_logits, T) on every rank.
  // A rank that throws aborts the group (the others' collectives throw instead of waiting); the first
  // failure is rethrown and the next step gets a fresh group.
  template <class RowsOf>
  void run(std::size_t first_logits, RowsOf rows_of) {
    std::vector<std::exception_ptr> errors(size());
    std::atomic<int> first_failure{-1};  // the rank that failed first; the others' errors echo it
    const auto rank = [&](std::size_t r) {
      try {
        rows_of(r, rows_[r]);
        forward_rows(*s_->rank(static_cast<int>(r)).model, rows_[r], first_logits, w_[r], nullptr, &tp_[r]);
      } catch (...) {
        errors[r] = std::current_exception();
        int none = -1;
        first_failure.compare_exchange_strong(none, static_cast<int>(r));
        comms_[r]->abort();
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t r = 1; r < size(); ++r) threads.emplace_back(rank, r);
    rank(0);
    for (auto& t : threads) t.join();
    if (const int f = first_failure.load(); f >= 0) {
      connect();  // an aborted group is unusable
      std::rethrow_exception(errors[static_cast<std::size_t>(f)]);
    }
  }

 private:
  void connect() {
    comms_ = trueno::loopback_group(s_->n_ranks());
    for (std::size_t r = 0; r < size(); ++r)
      tp_[r] = {comms_[r].get(), s_->rank(static_cast<int>(r)).vocab_begin, s_->vocab_slice(), s_->full().config().n_vocab};
  }

  std::shared_ptr<const TpShards> s_;
  std::vector<CpuScratch> w_;
  std::vector<std::vector<Row>> rows_;
  std::vector<TpRank> tp_;
  std::vector<std::unique_ptr<trueno::Communicator>> comms_;
};

class TpSequence final : public Sequence {
 public:
  TpSequence(std::shared_ptr<const TpShards> shards, std::size_t n_ctx) : g_(std::move(shards)), n_ctx_(n_ctx) {
    if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
    for (int r = 0; r < g_.shards().n_ranks(); ++r) {
      auto& c = caches_.emplace_back(std::make_unique<KvCache>(std::make_shared<KvPool>(g_.shards().rank(r).model->config(), n_ctx, 1)));
      c->reserve(n_ctx);
    }
  }
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override { pos_ = 0; }
  std::size_t kv_bytes() const override {
    std::size_t b = 0;
    for (const auto& c : caches_) b += c->bytes();
    return b;
  }
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override {
    return strcat(trueno::name(trueno::current_backend()), " x", g_.size(), " (tensor parallel, loopback)");
  }
  void set_recorder(Recorder* r) override {
    if (r != nullptr)
      throw trueno::InvalidArgument("a tensor-parallel sequence records no intermediates (a rank sees only its slices)");
  }

  void forward(std::span<const std::int32_t> tokens, bool all_logits) override {
    const std::size_t T = tokens.size();
    check_forward(g_.shards().full().config(), pos_, n_ctx_, tokens);  // before any rank starts: ranks never disagree
    g_.run(all_logits ? 0 : T - 1, [&](std::size_t r, std::vector<Row>& rows) {
      rows.resize(T);
      for (std::size_t t = 0; t < T; ++t) rows[t] = {tokens[t], pos_ + t, caches_[r].get()};
    });
    logits_ = g_.scratch(0).logits;  // every rank holds the gathered logits
    pos_ += T;
  }

 private:
  friend class TpBatch;
  RankGroup g_;
  std::size_t n_ctx_, pos_ = 0;
  std::vector<std::unique_ptr<KvCache>> caches_;  // [rank]: this rank's KV heads, f16 (Note [F16 attention])
  std::vector<float> logits_;
};

// One step over many TP sequences of the same shards (Note [Batched step]): each rank reads its weights
// once for all rows, each row its own cache; the all-reduces sum every element in rank order whatever the
// batch, so a sequence's logits are those it gets stepping alone, bit for bit (tested).
class TpBatch final : public Batch {
 public:
  explicit TpBatch(std::shared_ptr<const TpShards> s) : g_(std::move(s)) {}
  void step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) override {
    const Config& c = g_.shards().full().config();
    const auto tps = checked_batch<TpSequence>(
        c, seqs, tokens, [&](const TpSequence& t) { return t.g_.shared() == g_.shared(); }, "these tensor-parallel shards");
    const std::size_t B = tps.size(), V = c.n_vocab;
    if (B == 0) return;
    g_.run(0, [&](std::size_t r, std::vector<Row>& rows) {
      rows.resize(B);
      for (std::size_t i = 0; i < B; ++i) rows[i] = {tokens[i], tps[i]->pos_, tps[i]->caches_[r].get()};
    });
    const std::vector<float>& l = g_.scratch(0).logits;
    for (std::size_t i = 0; i < B; ++i) {
      tps[i]->logits_.assign(l.begin() + static_cast<std::ptrdiff_t>(i * V), l.begin() + static_cast<std::ptrdiff_t>((i + 1) * V));
      ++tps[i]->pos_;
    }
  }

 private:
  RankGroup g_;
};

}  // namespace

std::unique_ptr<Sequence> make_tp_sequence(std::shared_ptr<const TpShards> shards, std::size_t n_ctx) {
  return std::make_unique<TpSequence>(std::move(shards), n_ctx);
}

std::unique_ptr<Batch> make_tp_batch(std::shared_ptr<const TpShards> shards) { return std::make_unique<TpBatch>(std::move(shards)); }

}  // namespace realizar
