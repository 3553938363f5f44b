// The logger behind trueno/log.h.
#include "trueno/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/strings.h"

namespace trueno {
namespace {
constexpr const char* kLevelNames[] = {"error", "warn", "info", "debug"};

int initial_level() {
  const char* s = std::getenv("TRUENO_LOG");
  if (s == nullptr) return static_cast<int>(LogLevel::Warn);
  const std::string v = to_lower(s);
  for (int i = 0; i < 4; ++i)
    if (v == kLevelNames[i]) return i;
  std::fprintf(stderr, "trueno: warn: TRUENO_LOG='%s' is not one of error, warn, info, debug; using warn\n", s);
  return static_cast<int>(LogLevel::Warn);
}

std::atomic<int>& level() {
  static std::atomic<int> l{initial_level()};
  return l;
}

std::mutex g_mu;
std::function<void(LogLevel, std::string_view)> g_sink;
}  // namespace

bool log_enabled(LogLevel l) { return static_cast<int>(l) <= level().load(std::memory_order_relaxed); }

void set_log_level(LogLevel l) { level().store(static_cast<int>(l)); }

void set_log_sink(std::function<void(LogLevel, std::string_view)> sink) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_sink = std::move(sink);
}

void log(LogLevel l, std::string_view message) {
  if (!log_enabled(l)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_sink) {
    g_sink(l, message);
    return;
  }
  std::fprintf(stderr, "trueno: %s: %.*s\n", kLevelNames[static_cast<int>(l)], static_cast<int>(message.size()),
               message.data());
}

}  // namespace trueno
