#include "server/metrics.h"

#include <cstdio>

namespace realizar::server {
namespace {

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

const std::vector<double> kLatencyBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  std::lock_guard lock(mu_);
  ++counts_[i];
  sum_ += v;
  ++n_;
}

std::uint64_t Histogram::count() const {
  std::lock_guard lock(mu_);
  return n_;
}

void Histogram::render(std::string& out, const std::string& name) const {
  std::lock_guard lock(mu_);
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  cum += counts_.back();
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
  out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(n_) + "\n";
}

Metrics::Metrics() : ttft(kLatencyBounds), itl(kLatencyBounds), prefill_stall(kLatencyBounds) {}

void Metrics::count_request(const std::string& path, int status) {
  std::lock_guard lock(mu_);
  ++requests_[{path, status}];
}

std::string Metrics::render() const {
  std::string o;
  o += "# HELP realizar_requests_total HTTP requests answered, by path and status.\n# TYPE realizar_requests_total counter\n";
  {
    std::lock_guard lock(mu_);
    for (const auto& [k, n] : requests_)
      o += "realizar_requests_total{path=\"" + k.first + "\",status=\"" + std::to_string(k.second) + "\"} " + std::to_string(n) + "\n";
  }
  o += "# HELP realizar_prompt_tokens_total Prompt tokens prefilled.\n# TYPE realizar_prompt_tokens_total counter\n";
  o += "realizar_prompt_tokens_total " + std::to_string(prompt_tokens.load()) + "\n";
  o += "# HELP realizar_prefill_chunks_total Prompt chunks prefilled.\n# TYPE realizar_prefill_chunks_total counter\n";
  o += "realizar_prefill_chunks_total " + std::to_string(prefill_chunks.load()) + "\n";
  o += "# HELP realizar_prefill_passes_total Prefill passes (Batch::prefill calls: one or several prompts' chunks each).\n";
  o += "# TYPE realizar_prefill_passes_total counter\n";
  o += "realizar_prefill_passes_total " + std::to_string(prefill_passes.load()) + "\n";
  o += "# HELP realizar_prefill_turns_total Scheduler turns that prefilled at least one prompt chunk.\n# TYPE realizar_prefill_turns_total counter\n";
  o += "realizar_prefill_turns_total " + std::to_string(prefill_turns.load()) + "\n";
  o += "# HELP realizar_generated_tokens_total Tokens generated.\n# TYPE realizar_generated_tokens_total counter\n";
  o += "realizar_generated_tokens_total " + std::to_string(generated_tokens.load()) + "\n";
  o += "# HELP realizar_time_to_first_token_seconds From a request's arrival to its first generated token.\n";
  o += "# TYPE realizar_time_to_first_token_seconds histogram\n";
  ttft.render(o, "realizar_time_to_first_token_seconds");
  o += "# HELP realizar_inter_token_latency_seconds Between consecutive tokens of one stream.\n";
  o += "# TYPE realizar_inter_token_latency_seconds histogram\n";
  itl.render(o, "realizar_inter_token_latency_seconds");
  o += "# HELP realizar_prefill_stall_seconds A prompt chunk's prefill while decoding streams waited for it.\n";
  o += "# TYPE realizar_prefill_stall_seconds histogram\n";
  prefill_stall.render(o, "realizar_prefill_stall_seconds");
  auto gauge = [&](const char* name, const char* help, const std::function<std::size_t()>& f) {
    o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
    o += std::string(name) + " " + std::to_string(f ? f() : 0) + "\n";
  };
  gauge("realizar_queue_depth", "Requests waiting for a stream.", queue_depth);
  gauge("realizar_active_streams", "Streams prefilling or decoding.", active_streams);
  gauge("realizar_kv_blocks_in_use", "KV-cache blocks held by streams.", kv_blocks_in_use);
  gauge("realizar_kv_blocks_total", "KV-cache blocks in the pool.", kv_blocks_total);
  return o;
}

}  // namespace realizar::server
