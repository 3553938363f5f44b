#include "server/scheduler.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_map>

#include "realizar/sampler.h"
#include "trueno/threads.h"
#include "util/stop_strings.h"

namespace realizar::server {

using Clock = std::chrono::steady_clock;

bool Stream::wait(Delta& d, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return finished_ || !pending_.text.empty() || !pending_.lps.empty(); });
  d.text += pending_.text;
  d.lps.insert(d.lps.end(), std::make_move_iterator(pending_.lps.begin()), std::make_move_iterator(pending_.lps.end()));
  pending_.text.clear();
  pending_.lps.clear();
  return finished_;
}

std::string Stream::finish_reason() const {
  std::lock_guard lock(mu_);
  return reason_;
}
std::string Stream::error() const {
  std::lock_guard lock(mu_);
  return error_;
}
int Stream::error_status() const {
  std::lock_guard lock(mu_);
  return error_status_;
}
Usage Stream::usage() const {
  std::lock_guard lock(mu_);
  return usage_;
}

void Stream::push(const std::string& text, std::optional<TokenLogprob> lp) {
  {
    std::lock_guard lock(mu_);
    pending_.text += text;
    if (lp) pending_.lps.push_back(std::move(*lp));
  }
  cv_.notify_all();
}

void Stream::finish(std::string reason, Usage u, std::string error, int error_status) {
  {
    std::lock_guard lock(mu_);
    finished_ = true;
    reason_ = std::move(reason);
    usage_ = u;
    error_ = std::move(error);
    error_status_ = error_status;
  }
  cv_.notify_all();
}

struct Scheduler::Pending {
  std::shared_ptr<Stream> st;
  std::vector<std::int32_t> prompt;
  GenParams p;
  Clock::time_point arrived;
};

struct Scheduler::Slot {
  enum class State { Free, Prefill, Decode } state = State::Free;
  std::unique_ptr<Sequence> session;  // a CPU Session on the shared pool, or a device sequence
  std::shared_ptr<Stream> st;
  GenParams p;
  std::optional<Sampler> sampler;
  std::optional<StopStrings> stops;
  Utf8Stream utf8;
  std::vector<std::int32_t> prompt;
  std::size_t prefilled = 0, generated = 0;
  int max_tokens = 0;
  std::unordered_map<std::int32_t, int> counts;  // generated tokens, for the presence/frequency penalties
  std::vector<float> work;                       // penalized logits
  std::int32_t pending = -1;                     // the last sampled token, fed at the next decode step
  Clock::time_point arrived, last_token;

  explicit Slot(std::unique_ptr<Sequence> s) : session(std::move(s)) {}
};

Scheduler::Scheduler(const Model& model, const Tokenizer& tok, SchedulerOptions o, Metrics& metrics)
    : model_(model), tok_(tok), o_(o), metrics_(metrics) {
  if (o_.parallel == 0 || o_.n_ctx < 2 || o_.prefill_chunk == 0 || o_.kv_block == 0)
    throw ApiError(500, "scheduler: parallel, prefill_chunk and kv_block must be >= 1 and n_ctx >= 2");
  // Every stream can grow to its whole context: the pool never runs out (no OutOfKvBlocks mid-stream),
  // and blocks are only held for the positions a stream has reached.
  const std::size_t per_stream = (o_.n_ctx + o_.kv_block - 1) / o_.kv_block;
  // On a device (o_.weights), every stream is a sequence of the shared upload with its own KV cache there.
  if (o_.weights) {
    for (std::size_t i = 0; i < o_.parallel; ++i) slots_.push_back(std::make_unique<Slot>(o_.weights->new_sequence(o_.n_ctx)));
    batch_ = o_.weights->new_batch();
  } else {
    pool_ = std::make_shared<KvPool>(model.config(), o_.kv_block, std::max<std::size_t>(2, per_stream * o_.parallel));
    for (std::size_t i = 0; i < o_.parallel; ++i) slots_.push_back(std::make_unique<Slot>(std::make_unique<Session>(model, o_.n_ctx, pool_)));
    batch_ = std::make_unique<CpuBatch>(model);
  }
  thread_ = std::thread([this] { run(); });
}

Scheduler::~Scheduler() { drain(std::chrono::milliseconds(0)); }

std::size_t Scheduler::queue_depth() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

std::shared_ptr<Stream> Scheduler::submit(std::vector<std::int32_t> prompt, const GenParams& p, const std::string& prompt_param) {
  if (prompt.empty()) throw ApiError(400, "'" + prompt_param + "' is empty and this vocabulary adds no BOS token: nothing to continue", prompt_param);
  if (prompt.size() + 1 > o_.n_ctx)
    throw ApiError(400, "'" + prompt_param + "' is " + std::to_string(prompt.size()) + " tokens, which leaves no room to generate in a context of " +
                            std::to_string(o_.n_ctx) + " positions per stream (--ctx-size)",
                   prompt_param, "invalid_request_error", "context_length_exceeded");
  Pending e{std::make_shared<Stream>(), std::move(prompt), p, Clock::now()};
  if (p.seed) {
    e.st->seed_ = *p.seed;
  } else {
    std::random_device rd;
    e.st->seed_ = (std::uint64_t{rd()} << 32) ^ rd();
  }
  auto st = e.st;
  {
    std::lock_guard lock(mu_);
    if (shutting_) {
      ApiError err(503, "the server is shutting down", {}, "server_error", "shutting_down");
      throw err;
    }
    if (queue_.size() >= o_.max_queue) {
      ApiError err(429, "the queue is full (" + std::to_string(o_.max_queue) + " requests waiting for one of " +
                            std::to_string(o_.parallel) + " streams); retry later",
                   {}, "rate_limit_error", "queue_full");
      err.retry_after_s = 1;
      throw err;
    }
    queue_.push_back(std::move(e));
  }
  cv_.notify_all();
  return st;
}

void Scheduler::begin_shutdown() {
  std::deque<Pending> dropped;
  {
    std::lock_guard lock(mu_);
    shutting_ = true;
    dropped.swap(queue_);
  }
  for (auto& p : dropped) p.st->finish("cancelled", {p.prompt.size(), 0}, "the server is shutting down", 503);
  cv_.notify_all();
}

std::size_t Scheduler::drain(std::chrono::milliseconds grace) {
  begin_shutdown();
  const auto until = Clock::now() + grace;
  while (active_ > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::size_t cancelled = 0;
  {
    std::lock_guard lock(mu_);
    cancelled = active_;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  return cancelled;
}

void Scheduler::start(Slot& s, Pending&& p) {
  s.st = std::move(p.st);
  s.p = p.p;
  SamplerOptions so;
  so.temperature = p.p.temperature;
  so.top_k = p.p.top_k;
  so.top_p = p.p.top_p;
  so.min_p = p.p.min_p;
  so.repeat_penalty = 1.0f;
  so.seed = s.st->seed_;
  s.sampler.emplace(so);
  s.stops.emplace(p.p.stop);
  s.utf8 = Utf8Stream();
  s.prompt = std::move(p.prompt);
  s.prefilled = s.generated = 0;
  const int room = static_cast<int>(o_.n_ctx - s.prompt.size());
  s.max_tokens = std::min(p.p.max_tokens > 0 ? p.p.max_tokens : o_.max_tokens_cap, room);
  s.counts.clear();
  s.pending = -1;
  s.arrived = p.arrived;
  s.session->reset();
  s.state = Slot::State::Prefill;
  ++active_;
}

void Scheduler::finish(Slot& s, const std::string& reason, const std::string& error, int status) {
  if (reason != "cancelled" && !s.stops->stopped()) {
    const std::string rest = s.stops->push(s.utf8.flush()) + s.stops->flush();
    if (!rest.empty()) s.st->push(rest, std::nullopt);
  }
  // The KV blocks go back to the pool before the consumer hears of the end (so it sees them free).
  s.session->reset();
  s.sampler.reset();
  s.state = Slot::State::Free;
  --active_;
  const auto st = std::move(s.st);
  st->finish(reason, {s.prompt.size(), s.generated}, error, error.empty() ? 0 : status);
}

namespace {

// log-softmax of the chosen token and the k most likely ones.
TokenLogprob logprobs_of(std::span<const float> logits, std::int32_t chosen, int k, const Tokenizer& tok) {
  float mx = -INFINITY;
  for (float l : logits) mx = std::max(mx, l);
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  TokenLogprob t;
  t.token = tok.piece(chosen);
  t.logprob = logits[chosen] - lse;
  if (k > 0) {
    std::vector<std::int32_t> idx(logits.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int32_t>(i);
    const std::size_t n = std::min<std::size_t>(k, idx.size());
    std::partial_sort(idx.begin(), idx.begin() + n, idx.end(),
                      [&](std::int32_t a, std::int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    for (std::size_t i = 0; i < n; ++i) t.top.emplace_back(tok.piece(idx[i]), logits[idx[i]] - lse);
  }
  return t;
}

}  // namespace

// The next token of a slot from its logits: penalties, then its own sampler (only the slot's state is
// touched, so the slots of a decode step pick in parallel).
std::int32_t Scheduler::pick(Slot& s) {
  if ((s.p.presence_penalty != 0 || s.p.frequency_penalty != 0) && !s.counts.empty()) {
    std::span<const float> logits = s.session->logits();
    s.work.assign(logits.begin(), logits.end());
    for (const auto& [t, c] : s.counts) s.work[t] -= s.p.presence_penalty + s.p.frequency_penalty * static_cast<float>(c);
    return s.sampler->sample(s.work, {});
  }
  return s.session->sample(*s.sampler, {});  // a device sequence picks where its logits are
}

void Scheduler::on_logits(Slot& s) { on_token(s, pick(s)); }

void Scheduler::on_token(Slot& s, std::int32_t next) {
  if (!s.p.ignore_eos && tok_.is_end_of_generation(next)) return finish(s, "stop");
  const auto now = Clock::now();
  if (s.generated == 0) metrics_.ttft.observe(std::chrono::duration<double>(now - s.arrived).count());
  else metrics_.itl.observe(std::chrono::duration<double>(now - s.last_token).count());
  s.last_token = now;
  ++s.generated;
  ++s.counts[next];
  ++metrics_.generated_tokens;
  std::optional<TokenLogprob> lp;
  if (s.p.logprobs >= 0) lp = logprobs_of(s.session->logits(), next, s.p.logprobs, tok_);
  s.st->push(s.stops->push(s.utf8.push(tok_.piece(next))), std::move(lp));
  if (s.stops->stopped()) return finish(s, "stop");
  if (static_cast<int>(s.generated) >= s.max_tokens || s.session->pos() >= s.session->n_ctx()) return finish(s, "length");
  s.pending = next;
  s.state = Slot::State::Decode;
}

namespace {
// Prefill time per turn (Note [Serve scheduler]): with streams decoding, as long as their step took (so a
// waiting prompt at most doubles the inter-token latency), at least kMinPrefillSeconds; in a burst (more
// prompts waiting than streams decoding, or none decoding), up to kBurstPrefillSeconds before the
// scheduler decodes and looks at the queue again.
constexpr double kMinPrefillSeconds = 0.01, kBurstPrefillSeconds = 2.0;
}  // namespace

bool Scheduler::stop_requested() {
  std::lock_guard lock(mu_);
  return stop_;
}

void Scheduler::run() {
  std::vector<Sequence*> seqs;
  std::vector<std::int32_t> toks;
  std::vector<Slot*> batch;
  std::vector<std::int32_t> picked;
  std::vector<Slot*> prefilling;
  std::vector<std::span<const std::int32_t>> chunks;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty() || active_ > 0; });
      if (stop_) break;
      std::erase_if(queue_, [](const Pending& p) {
        if (!p.st->cancelled()) return false;
        p.st->finish("cancelled", {p.prompt.size(), 0});
        return true;
      });
      for (auto& s : slots_) {
        if (queue_.empty()) break;
        if (s->state != Slot::State::Free) continue;
        start(*s, std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    for (auto& s : slots_)
      if (s->state != Slot::State::Free && s->st->cancelled()) finish(*s, "cancelled");

    // One decode step for every stream that has a token to feed.
    seqs.clear();
    toks.clear();
    batch.clear();
    for (auto& s : slots_)
      if (s->state == Slot::State::Decode) {
        seqs.push_back(s->session.get());
        toks.push_back(s->pending);
        batch.push_back(s.get());
      }
    double step_seconds = 0.0;
    if (!batch.empty()) {
      const auto t0 = Clock::now();
      try {
        batch_->step(seqs, toks);
        step_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        // Sampling is per stream over the whole vocabulary (a sort when top_k is off, the OpenAI default):
        // the streams pick in parallel, then emit in order.
        picked.resize(batch.size());
        trueno::parallel_for(batch.size(), [&](std::size_t i) { picked[i] = pick(*batch[i]); });
        for (std::size_t i = 0; i < batch.size(); ++i) on_token(*batch[i], picked[i]);
      } catch (const std::exception& e) {
        for (Slot* s : batch)
          if (s->state != Slot::State::Free) finish(*s, "error", std::string("decode step failed: ") + e.what());
      }
    }

    // Prompt chunks, oldest prompt first, until this turn's prefill time reaches the decode step's (at
    // least one chunk); with no stream decoding, or more prompts waiting than streams decoding (a burst),
    // up to kBurstPrefillSeconds: Note [Serve scheduler].
    std::size_t waiting = 0;
    for (auto& c : slots_) waiting += c->state == Slot::State::Prefill;
    const double budget = waiting > batch.size() ? kBurstPrefillSeconds : std::max(step_seconds, kMinPrefillSeconds);
    const std::size_t pass_tokens = waiting > batch.size() ? std::max(o_.prefill_batch, o_.prefill_chunk) : o_.prefill_chunk;
    const auto p0 = Clock::now();
    for (bool first = true;; first = false) {
      if (!first && std::chrono::duration<double>(Clock::now() - p0).count() >= budget) break;
      if (stop_requested()) break;
      // This pass: the next chunk of each waiting prompt, oldest first, while they fit in pass_tokens.
      prefilling.clear();
      for (auto& c : slots_)
        if (c->state == Slot::State::Prefill && !c->st->cancelled()) prefilling.push_back(c.get());
      if (prefilling.empty()) break;
      std::sort(prefilling.begin(), prefilling.end(), [](const Slot* a, const Slot* b) { return a->arrived < b->arrived; });
      seqs.clear(), chunks.clear();
      std::size_t tokens = 0, taken = 0;
      for (Slot* c : prefilling) {
        const std::size_t n = std::min(o_.prefill_chunk, c->prompt.size() - c->prefilled);
        if (taken > 0 && tokens + n > pass_tokens) break;
        seqs.push_back(c->session.get()), chunks.push_back(std::span<const std::int32_t>(c->prompt).subspan(c->prefilled, n));
        tokens += n, ++taken;
      }
      prefilling.resize(taken);
      const auto t0 = Clock::now();
      try {
        batch_->prefill(seqs, chunks);
      } catch (const std::exception& e) {
        for (Slot* c : prefilling) finish(*c, "error", std::string("prefill failed: ") + e.what());
        continue;
      }
      if (!batch.empty()) metrics_.prefill_stall.observe(std::chrono::duration<double>(Clock::now() - t0).count());
      metrics_.prompt_tokens += tokens;
      metrics_.prefill_chunks += taken;
      ++metrics_.prefill_passes;
      if (first) ++metrics_.prefill_turns;
      for (std::size_t i = 0; i < taken; ++i) {
        Slot& s = *prefilling[i];
        s.prefilled += chunks[i].size();
        if (s.prefilled == s.prompt.size()) on_logits(s);
      }
    }
  }
  // Stopping: whatever still runs is cancelled.
  for (auto& s : slots_)
    if (s->state != Slot::State::Free) finish(*s, "cancelled", "the server is shutting down", 503);
}

}  // namespace realizar::server
