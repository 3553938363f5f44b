// The tensor-parallel CPU sequence: N ranks, one thread each, over the loopback group; each rank runs the
// CPU forward pass (model/forward_rows.h) on its shard with its own KV cache (its KV heads only).
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

struct RankState {
  RankState(const Model& shard, std::size_t n_ctx) : cache(std::make_shared<KvPool>(shard.config(), n_ctx, 1)) {
    cache.reserve(n_ctx);
  }
  KvCache cache;  // this rank's KV heads, f16 (Note [F16 attention])
  CpuScratch w;
  std::vector<Row> rows;
  std::unique_ptr<trueno::Communicator> comm;
  TpRank tp;
};

class TpSequence final : public Sequence {
 public:
  TpSequence(std::shared_ptr<const TpShards> shards, std::size_t n_ctx) : s_(std::move(shards)), n_ctx_(n_ctx) {
    if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
    for (int r = 0; r < s_->n_ranks(); ++r) ranks_.push_back(std::make_unique<RankState>(*s_->rank(r).model, n_ctx));
    connect();
  }
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override { pos_ = 0; }
  std::size_t kv_bytes() const override {
    std::size_t b = 0;
    for (const auto& r : ranks_) b += r->cache.bytes();
    return b;
  }
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override {
    return strcat(trueno::name(trueno::current_backend()), " x", s_->n_ranks(), " (tensor parallel, loopback)");
  }
  void set_recorder(Recorder* r) override {
    if (r != nullptr)
      throw trueno::InvalidArgument("a tensor-parallel sequence records no intermediates (a rank sees only its slices)");
  }

  void forward(std::span<const std::int32_t> tokens, bool all_logits) override {
    const std::size_t T = tokens.size();
    check_forward(s_->full().config(), pos_, n_ctx_, tokens);  // before any rank starts: ranks never disagree
    const std::size_t first_logits = all_logits ? 0 : T - 1;
    std::vector<std::exception_ptr> errors(ranks_.size());
    std::atomic<int> first_failure{-1};  // the rank that failed first; the others' errors echo it
    const auto run = [&](std::size_t r) {
      RankState& st = *ranks_[r];
      try {
        st.rows.resize(T);
        for (std::size_t t = 0; t < T; ++t) st.rows[t] = {tokens[t], pos_ + t, &st.cache};
        forward_rows(*s_->rank(static_cast<int>(r)).model, st.rows, first_logits, st.w, nullptr, &st.tp);
      } catch (...) {
        errors[r] = std::current_exception();
        int none = -1;
        first_failure.compare_exchange_strong(none, static_cast<int>(r));
        st.comm->abort();  // the other ranks' collectives throw instead of waiting for this one
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t r = 1; r < ranks_.size(); ++r) threads.emplace_back(run, r);
    run(0);
    for (auto& t : threads) t.join();
    if (const int f = first_failure.load(); f >= 0) {
      connect();  // an aborted group is unusable: the next forward gets a fresh one
      std::rethrow_exception(errors[static_cast<std::size_t>(f)]);
    }
    logits_ = ranks_[0]->w.logits;  // every rank holds the gathered logits
    pos_ += T;
  }

 private:
  // A new loopback group for the ranks.
  void connect() {
    auto group = trueno::loopback_group(s_->n_ranks());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      RankState& st = *ranks_[r];
      st.comm = std::move(group[r]);
      st.tp = {st.comm.get(), s_->rank(static_cast<int>(r)).vocab_begin, s_->vocab_slice(), s_->full().config().n_vocab};
    }
  }

  std::shared_ptr<const TpShards> s_;
  std::size_t n_ctx_, pos_ = 0;
  std::vector<std::unique_ptr<RankState>> ranks_;
  std::vector<float> logits_;
};

}  // namespace

std::unique_ptr<Sequence> make_tp_sequence(std::shared_ptr<const TpShards> shards, std::size_t n_ctx) {
  return std::make_unique<TpSequence>(std::move(shards), n_ctx);
}

}  // namespace realizar
