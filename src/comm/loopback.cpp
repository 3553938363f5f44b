// The loopback communicator: threads of one process as ranks (Note [Loopback reduction order], comm.h).
#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/strings.h"
#include "trueno/comm.h"
#include "trueno/error.h"

namespace trueno {
namespace {

// What the ranks share: each collective posts every rank's buffer, waits at the barrier, reads the
// others' buffers, and waits again before any rank may reuse its buffer.
struct Shared {
  explicit Shared(int n) : n(n), barrier(n), in(static_cast<std::size_t>(n)), count(static_cast<std::size_t>(n)) {}
  const int n;
  std::barrier<> barrier;
  std::vector<const float*> in;
  std::vector<std::size_t> count;
  std::atomic<int> failed{-1};  // the first rank that called abort(), or -1
};

class Loopback final : public Communicator {
 public:
  Loopback(std::shared_ptr<Shared> s, int rank) : s_(std::move(s)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return s_->n; }
  std::string name() const override { return "loopback"; }

  void all_reduce_sum(float* data, std::size_t n) override {
    post(data, n, "all_reduce_sum");
    sum_.resize(n);
    const std::size_t R = static_cast<std::size_t>(s_->n);
    std::memcpy(sum_.data(), s_->in[0], n * sizeof(float));
    for (std::size_t r = 1; r < R; ++r) {  // rank order on every rank (Note [Loopback reduction order])
      const float* x = s_->in[r];
      for (std::size_t i = 0; i < n; ++i) sum_[i] += x[i];
    }
    wait();  // every rank has read every buffer: now each may overwrite its own
    std::memcpy(data, sum_.data(), n * sizeof(float));
  }

  void all_gather(const float* in, float* out, std::size_t n) override {
    post(in, n, "all_gather");
    for (std::size_t r = 0; r < static_cast<std::size_t>(s_->n); ++r) std::memcpy(out + r * n, s_->in[r], n * sizeof(float));
    wait();
  }

  void abort() override {
    if (dropped_) return;
    int none = -1;
    s_->failed.compare_exchange_strong(none, rank_);
    dropped_ = true;
    s_->barrier.arrive_and_drop();  // the others' waits complete without this rank, then they throw
  }

 private:
  void post(const float* p, std::size_t n, const char* what) {
    if (dropped_) throw Error(strcat("loopback rank ", rank_, ": ", what, " after abort()"));
    s_->in[rank_] = p, s_->count[rank_] = n;
    wait();
    for (int r = 0; r < s_->n; ++r)
      if (s_->count[r] != n) {  // the ranks disagree on the program: a bug in the caller, not recoverable
        std::fprintf(stderr, "trueno: loopback %s: rank %d passed %zu values, rank %d %zu\n", what, rank_, n, r, s_->count[r]);
        std::abort();
      }
  }

  void wait() {
    s_->barrier.arrive_and_wait();
    if (const int f = s_->failed.load(); f >= 0) {
      abort();  // leave too, so that ranks still waiting are released
      throw Error(strcat("loopback rank ", rank_, ": rank ", f, " of the group failed"));
    }
  }

  std::shared_ptr<Shared> s_;
  const int rank_;
  bool dropped_ = false;
  std::vector<float> sum_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> loopback_group(int n_ranks) {
  if (n_ranks < 1) throw InvalidArgument(strcat("loopback_group(", n_ranks, "): a group needs at least one rank"));
  auto shared = std::make_shared<Shared>(n_ranks);
  std::vector<std::unique_ptr<Communicator>> v;
  for (int r = 0; r < n_ranks; ++r) v.push_back(std::make_unique<Loopback>(shared, r));
  return v;
}

}  // namespace trueno
