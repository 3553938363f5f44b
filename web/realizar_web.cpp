// realizar in the browser page (web/): a small C API over one model, its tokenizer, one CPU sequence and a
// sampler, called from JavaScript (web/cpu_engine.mjs). The page copies a GGUF image into memory from
// rz_image_alloc() tensor by tensor (Blob.slice, never the whole file in one ArrayBuffer), then rz_open().
// No exception crosses into JavaScript: a failing call returns 0 / -1 and rz_error() says why.
#include <emscripten/emscripten.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "realizar/gguf.h"
#include "realizar/model.h"
#include "realizar/sampler.h"
#include "realizar/tokenizer.h"
#include "trueno/threads.h"

namespace {

using namespace realizar;

struct FreeImage {
  void operator()(std::byte* p) const { std::free(p); }
};

struct Engine {
  std::unique_ptr<std::byte, FreeImage> image;  // the GGUF image the model's weights point into
  gguf::File file;
  Model model;
  Tokenizer tok;
  std::unique_ptr<Session> seq;
  std::unique_ptr<Sampler> sampler = std::make_unique<Sampler>(SamplerOptions{.temperature = 0});
  std::vector<std::int32_t> history;  // prompt + generated: the repetition penalty's window
  Utf8Stream utf8;
  std::string text, info;  // the last piece / description handed to JavaScript

  Engine(std::byte* img, std::size_t size, std::size_t n_ctx)
      : image(img), file(gguf::File::parse(std::span<const std::byte>(img, size), "the page's model")),
        model(file, Config::from_gguf(file)), tok(Tokenizer::from_gguf(file)),
        seq(std::make_unique<Session>(model, n_ctx ? n_ctx : model.config().n_ctx_train)) {}
};

std::string g_error;

template <class F>
auto guarded(F&& f, decltype(f()) failed) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    g_error = e.what();
  } catch (...) {
    g_error = "unknown error";
  }
  return failed;
}

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* rz_error() { return g_error.c_str(); }

// Memory for a GGUF image of size bytes (64-byte aligned, as a mapping's tensors are), or null.
EMSCRIPTEN_KEEPALIVE void* rz_image_alloc(std::size_t size) {
  void* p = std::aligned_alloc(64, (size + 63) / 64 * 64);
  if (!p) g_error = "out of memory: " + std::to_string(size >> 20) + " MiB for the model (WebAssembly has at most 4 GiB)";
  return p;
}
EMSCRIPTEN_KEEPALIVE void rz_image_free(void* p) { std::free(p); }

// Takes the image (freed with the engine, or now on failure). n_ctx 0: the training context.
EMSCRIPTEN_KEEPALIVE Engine* rz_open(void* image, std::size_t size, int n_ctx) {
  auto* img = static_cast<std::byte*>(image);
  Engine* e = guarded([&] { return new Engine(img, size, static_cast<std::size_t>(n_ctx)); }, nullptr);
  if (!e) std::free(img);
  return e;
}
EMSCRIPTEN_KEEPALIVE void rz_close(Engine* e) { delete e; }

EMSCRIPTEN_KEEPALIVE const char* rz_describe(Engine* e) {
  e->info = e->model.config().describe() + " | " + e->tok.describe() + " | cpu: " + e->seq->backend_name() + ", " +
            std::to_string(trueno::num_threads()) + " threads";
  return e->info.c_str();
}
// Threads for the CPU kernels, at most the worker pool made at start-up (Note [WASM threads]: a thread
// beyond it would wait for the main thread's event loop, which a waiting kernel never returns to).
EMSCRIPTEN_KEEPALIVE int rz_set_threads(int n) {
  trueno::set_num_threads(std::clamp(n, 1, TRUENO_WASM_MAX_THREADS));
  return trueno::num_threads();
}
EMSCRIPTEN_KEEPALIVE int rz_n_vocab(Engine* e) { return static_cast<int>(e->model.config().n_vocab); }
EMSCRIPTEN_KEEPALIVE int rz_n_ctx(Engine* e) { return static_cast<int>(e->seq->n_ctx()); }
EMSCRIPTEN_KEEPALIVE int rz_pos(Engine* e) { return static_cast<int>(e->seq->pos()); }

// Token ids of text (with the vocabulary's BOS) into out[max]; the count, or -1.
EMSCRIPTEN_KEEPALIVE int rz_tokenize(Engine* e, const char* text, std::int32_t* out, int max) {
  return guarded([&] {
    const auto ids = e->tok.encode(text, true);
    if (static_cast<int>(ids.size()) > max) throw std::runtime_error("the prompt has " + std::to_string(ids.size()) + " tokens, more than " + std::to_string(max));
    std::memcpy(out, ids.data(), ids.size() * sizeof(std::int32_t));
    return static_cast<int>(ids.size());
  }, -1);
}

// A new text: the sequence, the history and the UTF-8 stream emptied; sampling as given.
EMSCRIPTEN_KEEPALIVE int rz_reset(Engine* e, float temperature, double seed) {
  return guarded([&] {
    e->seq->reset();
    e->history.clear();
    e->utf8 = Utf8Stream();
    SamplerOptions o;
    o.temperature = temperature;
    o.seed = static_cast<std::uint64_t>(seed);
    e->sampler = std::make_unique<Sampler>(o);
    return 0;
  }, -1);
}

// The CPU forward of tokens[n] at the sequence's position (the prompt at once, or one token); they join
// the history. rz_logits() then holds the last token's logits [n_vocab].
EMSCRIPTEN_KEEPALIVE int rz_forward(Engine* e, const std::int32_t* tokens, int n) {
  return guarded([&] {
    if (e->seq->pos() + static_cast<std::size_t>(n) > e->seq->n_ctx()) throw std::runtime_error("the context is full (" + std::to_string(e->seq->n_ctx()) + " positions)");
    e->seq->forward(std::span(tokens, static_cast<std::size_t>(n)));
    e->history.insert(e->history.end(), tokens, tokens + n);
    return 0;
  }, -1);
}
EMSCRIPTEN_KEEPALIVE const float* rz_logits(Engine* e) { return e->seq->logits().data(); }

// Tokens another backend (WebGPU) ran: they join the history only.
EMSCRIPTEN_KEEPALIVE void rz_note_tokens(Engine* e, const std::int32_t* tokens, int n) { e->history.insert(e->history.end(), tokens, tokens + n); }

// The next token from the CPU's logits, or from logits[n_vocab] given by another backend (null: the CPU's).
EMSCRIPTEN_KEEPALIVE int rz_sample(Engine* e, const float* logits) {
  return guarded([&] {
    const std::span<const float> row = logits ? std::span(logits, e->model.config().n_vocab) : e->seq->logits();
    return static_cast<int>(e->sampler->sample(row, e->history));
  }, -1);
}

EMSCRIPTEN_KEEPALIVE int rz_is_end(Engine* e, int token) { return e->tok.is_end_of_generation(token) ? 1 : 0; }

// The bytes token adds (whole UTF-8 sequences only; the rest waits for the next token or rz_flush), as
// a NUL-terminated string whose length is rz_text_size() (a byte token may be NUL itself).
EMSCRIPTEN_KEEPALIVE const char* rz_piece(Engine* e, int token) {
  e->text = e->utf8.push(e->tok.piece(token));
  return e->text.c_str();
}
EMSCRIPTEN_KEEPALIVE const char* rz_flush(Engine* e) {
  e->text = e->utf8.flush();
  return e->text.c_str();
}
EMSCRIPTEN_KEEPALIVE int rz_text_size(Engine* e) { return static_cast<int>(e->text.size()); }

}  // extern "C"
