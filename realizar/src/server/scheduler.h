// Note [Serve scheduler]
// Continuous batching on the CPU: one thread owns `parallel` stream slots, each a
// Session whose KV blocks come from one shared KvPool. Each turn it (1) admits queued requests into free
// slots, (2) frees the slots of cancelled requests (a client that went away), (3) advances every decoding
// stream by one token in one CpuBatch::step, and (4) prefills prompt chunks (at most prefill_chunk tokens
// each), oldest prompt first, for as long as that step took (at least one chunk), or, in a burst (more
// prompts waiting than streams decoding), for up to 2 s. So requests join and leave the batch at token
// boundaries, a waiting prompt at most doubles the running streams' inter-token latency in steady state
// (measured: realizar_prefill_stall_seconds), and a burst of prompts gets its first tokens after one
// prefill turn instead of one chunk per decode step (time to first token under load: issue 16;
// realizar_prefill_chunks_total / realizar_prefill_turns_total). In a burst one pass takes the next
// chunks of several prompts, oldest first, up to prefill_batch tokens (Batch::prefill; on a device one
// pass over the weights for all of them, Note [Joint prefill]).
// Each request samples with its own Sampler and seed; on the CPU a sequence's logits are bit-identical
// alone or in any batch (Note [Batched step]) and a prompt is always cut into the same chunks, so a
// seeded request's text does not depend on what else is running. (On a device, GEMMs over more rows may
// round differently: there the logits agree to the CUDA contracts' bounds, not bit for bit.)
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "realizar/model.h"
#include "realizar/tokenizer.h"
#include "server/metrics.h"
#include "server/openai.h"

namespace realizar::server {

struct SchedulerOptions {
  std::size_t parallel = 4;        // streams decoded together
  std::size_t n_ctx = 512;         // positions per stream (prompt + generated)
  std::size_t prefill_chunk = 64;  // most prompt tokens prefilled between two decode steps
  // Most prompt tokens of one prefill pass in a burst: the next chunks of several waiting prompts go
  // together (Batch::prefill: one pass over the weights on a device, Note [Joint prefill]); at least one
  // chunk. Outside a burst a pass takes one chunk.
  std::size_t prefill_batch = 64;
  std::size_t max_queue = 64;      // requests waiting for a slot; more: 429
  std::size_t kv_block = 16;       // positions per KV block
  int max_tokens_cap = 4096;       // default and largest max_tokens
  std::shared_ptr<DeviceWeights> weights;  // the model on a device (Batch of its sequences); null: the CPU
};

// A request's output, shared by the scheduler (producer) and the HTTP thread (consumer).
class Stream {
 public:
  struct Delta {
    std::string text;
    std::vector<TokenLogprob> lps;
  };
  // Waits up to `timeout` for output and appends what there is to d. True once the stream has finished
  // (d then holds everything that was left).
  bool wait(Delta& d, std::chrono::milliseconds timeout);
  // The client went away: the scheduler frees the slot and its KV blocks at the next token boundary.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  // After wait() returned true: "stop", "length", "cancelled"; error() non-empty when the server failed it.
  std::string finish_reason() const;
  std::string error() const;
  int error_status() const;
  Usage usage() const;
  std::uint64_t seed() const { return seed_; }

 private:
  friend class Scheduler;
  void push(const std::string& text, std::optional<TokenLogprob> lp);
  void finish(std::string reason, Usage u, std::string error = {}, int error_status = 0);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Delta pending_;
  bool finished_ = false;
  std::string reason_, error_;
  int error_status_ = 0;
  Usage usage_;
  std::uint64_t seed_ = 0;
  std::atomic<bool> cancelled_{false};
};

class Scheduler {
 public:
  Scheduler(const Model& model, const Tokenizer& tok, SchedulerOptions o, Metrics& metrics);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a request. Throws ApiError: 400 for an empty prompt or one that leaves no room in a stream's
  // context (naming prompt_param), 429 when the queue is full, 503 once shutting down.
  std::shared_ptr<Stream> submit(std::vector<std::int32_t> prompt, const GenParams& p, const std::string& prompt_param);

  // Refuses new requests (503) and cancels the queued ones; running streams go on.
  void begin_shutdown();
  // Waits up to `grace` for the running streams to finish, then cancels the rest; stops the thread.
  // Returns the number of streams that had to be cancelled.
  std::size_t drain(std::chrono::milliseconds grace);

  const SchedulerOptions& options() const { return o_; }
  std::size_t queue_depth() const;
  std::size_t active_streams() const { return active_; }
  // The CPU's paged pool; 0 on a device (each device sequence holds its whole context).
  std::size_t kv_blocks_in_use() const { return pool_ ? pool_->total_blocks() - pool_->free_blocks() : 0; }
  std::size_t kv_blocks_total() const { return pool_ ? pool_->total_blocks() : 0; }

 private:
  struct Pending;
  struct Slot;
  void run();
  void start(Slot& s, Pending&& p);
  void on_logits(Slot& s);                     // pick, then on_token
  std::int32_t pick(Slot& s);                  // the next token (only s is touched: parallel over slots)
  void on_token(Slot& s, std::int32_t next);  // emits it, or finishes the stream
  void finish(Slot& s, const std::string& reason, const std::string& error = {}, int status = 500);

  const Model& model_;
  const Tokenizer& tok_;
  SchedulerOptions o_;
  Metrics& metrics_;
  std::shared_ptr<KvPool> pool_;
  std::unique_ptr<Batch> batch_;
  std::vector<std::unique_ptr<Slot>> slots_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool shutting_ = false, stop_ = false;
  bool stop_requested();  // stop_, under the lock
  std::atomic<std::size_t> active_{0};
  std::thread thread_;
};

}  // namespace realizar::server
