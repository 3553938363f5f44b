// Context sizes against the model and the machine: a warning past the training context, and a KV cache
// that cannot be allocated reported with the sizes asked for (not a bare std::bad_alloc).
#pragma once
#include <cstddef>
#include <memory>
#include <span>

#include "model_options.h"
#include "realizar/model.h"

namespace realizar::cli {

// Bytes of the f16 KV cache for n_ctx positions (K and V, every layer).
std::uint64_t kv_cache_bytes(const Config& c, std::size_t n_ctx);

// Warns (stderr) when n_ctx exceeds the training context; throws when the KV cache is larger than this
// machine's memory, naming the sizes and `option`.
void check_context(const Config& c, std::size_t n_ctx, const char* option);

// m.open(...) with an allocation failure reported with the sizes asked for.
std::unique_ptr<Sequence> open_sequence(const ModelOptions& m, const Model& model, const gguf::File& file, std::size_t n_ctx,
                                        std::span<const std::int32_t> prompt, const BackendChoice& forced);

}  // namespace realizar::cli
