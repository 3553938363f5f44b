#include "gguf/mapped_files.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace realizar::gguf {
namespace {

// Fixed slots: the handler may only read memory, never allocate or lock.
struct Slot {
  std::atomic<const char*> addr{nullptr};
  std::size_t size = 0;
  char path[1024] = {};
};
constexpr int kSlots = 32;
Slot g_slots[kSlots];
std::mutex g_mu;  // writers only

void put(const char* s) { (void)!::write(STDERR_FILENO, s, std::strlen(s)); }

void on_sigbus(int sig, siginfo_t* info, void*) {
  const char* fault = static_cast<const char*>(info->si_addr);
  for (const Slot& s : g_slots) {
    const char* a = s.addr.load(std::memory_order_acquire);
    if (a == nullptr || fault < a || fault >= a + s.size) continue;
    put("\nrealizar: error: ");
    put(s.path);
    put(": the model file changed under this run (truncated or rewritten in place by another process while "
        "it was memory-mapped; SIGBUS). Write models to a new file and rename it into place.\n");
    ::_exit(1);
  }
  ::signal(sig, SIG_DFL);  // not ours: returning re-runs the faulting access under the default action
}

}  // namespace

void register_mapping(const void* addr, std::size_t size, const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (Slot& s : g_slots) {
    if (s.addr.load(std::memory_order_relaxed) != nullptr) continue;
    s.size = size;
    const std::size_t n = std::min(path.size(), sizeof s.path - 1);
    std::memcpy(s.path, path.data(), n);
    s.path[n] = '\0';
    s.addr.store(static_cast<const char*>(addr), std::memory_order_release);
    return;
  }  // all slots taken: that mapping's fault stays a plain SIGBUS
}

void unregister_mapping(const void* addr) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (Slot& s : g_slots)
    if (s.addr.load(std::memory_order_relaxed) == addr) s.addr.store(nullptr, std::memory_order_release);
}

void report_sigbus_on_mapped_files() {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace realizar::gguf
