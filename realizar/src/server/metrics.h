// The server's Prometheus metrics (GET /metrics, text format 0.0.4): counters, gauges read at scrape time,
// and fixed-bucket histograms. Thread-safe.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace realizar::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  // Appends NAME_bucket{le=..}, NAME_sum, NAME_count lines.
  void render(std::string& out, const std::string& name) const;
  std::uint64_t count() const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<std::uint64_t> counts_;  // per bucket (not cumulative), last = +Inf
  double sum_ = 0;
  std::uint64_t n_ = 0;
};

struct Metrics {
  Metrics();
  // Requests answered, by endpoint path and HTTP status.
  void count_request(const std::string& path, int status);
  std::atomic<std::uint64_t> prompt_tokens{0}, generated_tokens{0};
  // Prompt chunks prefilled, the passes that prefilled them (several chunks per pass in a burst), and
  // scheduler turns that prefilled at least one (chunks per turn: Note [Serve scheduler]).
  std::atomic<std::uint64_t> prefill_chunks{0}, prefill_passes{0}, prefill_turns{0};
  Histogram ttft, itl, prefill_stall;  // seconds
  // Gauges read at render time (set by the scheduler's owner).
  std::function<std::size_t()> queue_depth, active_streams, kv_blocks_in_use, kv_blocks_total;
  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
};

}  // namespace realizar::server
