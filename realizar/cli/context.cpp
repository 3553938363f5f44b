#include "context.h"

#include <unistd.h>

#include <cstdio>
#include <new>
#include <string>

#include "trueno/error.h"

namespace realizar::cli {
namespace {

std::string gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}

std::string kv_text(const Config& c, std::size_t n_ctx) {
  return "the KV cache for " + std::to_string(n_ctx) + " positions needs " + gib(static_cast<double>(kv_cache_bytes(c, n_ctx))) +
         " (" + std::to_string(kv_cache_bytes(c, 1)) + " bytes per position: " + std::to_string(c.n_layer) + " layers x K,V x " +
         std::to_string(c.n_head_kv * c.head_dim) + " f16 values)";
}

}  // namespace

std::uint64_t kv_cache_bytes(const Config& c, std::size_t n_ctx) {
  return 2ull * c.n_layer * n_ctx * c.n_head_kv * c.head_dim * sizeof(std::uint16_t);
}

void check_context(const Config& c, std::size_t n_ctx, const char* option) {
  if (c.n_ctx_train > 0 && n_ctx > c.n_ctx_train)
    std::fprintf(stderr, "realizar: warning: %s %zu is larger than the model's training context (%u positions); text past it is likely poor\n",
                 option, n_ctx, c.n_ctx_train);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  // Checked before allocating: the cache is zero-filled, so an over-large one would meet the OOM killer.
  if (pages > 0 && page > 0 && kv_cache_bytes(c, n_ctx) > static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page))
    throw trueno::InvalidArgument(std::string(option) + " " + std::to_string(n_ctx) + ": " + kv_text(c, n_ctx) + ", more than this machine's " +
                                  gib(static_cast<double>(pages) * static_cast<double>(page)) + " of memory");
}

std::unique_ptr<Sequence> open_sequence(const ModelOptions& m, const Model& model, const gguf::File& file, std::size_t n_ctx,
                                        std::span<const std::int32_t> prompt, const BackendChoice& forced) {
  try {
    return m.open(model, file, n_ctx, prompt, forced);
  } catch (const std::bad_alloc&) {
    throw trueno::Error("out of memory: " + kv_text(model.config(), n_ctx) + ", plus the working buffers; use a smaller context (-c)");
  }
}

}  // namespace realizar::cli
