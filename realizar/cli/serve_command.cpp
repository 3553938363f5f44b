// `realizar serve -m MODEL [--host H] [--port P] [--api-key K] [--parallel N] [-c CTX] ...`: an
// OpenAI-compatible HTTP server with continuous batching on the CPU (docs/SERVER.md). Runs until SIGINT or
// SIGTERM, then stops accepting work, lets in-flight streams finish within --shutdown-timeout (cancelling
// the rest) and exits 0.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <thread>

#include "commands.h"
#include "realizar/chat_template.h"
#include "context.h"
#include "model_options.h"
#include "numbers.h"
#include "realizar/model.h"
#include "realizar/tokenizer.h"
#include "server/http_server.h"
#include "server/scheduler.h"
#include "trueno/error.h"
#include "trueno/threads.h"

namespace realizar::cli {
namespace {

struct Opt {
  ModelOptions m;
  server::ServerOptions s;
  server::SchedulerOptions q;
  int ctx = 0;
  double shutdown_s = 10;
  std::string chat_template;
};

}  // namespace

std::function<int()> add_serve_command(CLI::App& app) {
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server with continuous batching (docs/SERVER.md)");
  o->m.add_to(cmd);
  cmd->add_option("--host", o->s.host, "Address to listen on");
  cmd->add_option("--port", o->s.port, "Port (0: any free port, printed at start)")->check(integer_in(0, 65535));
  cmd->add_option("--api-key", o->s.api_key, "Require 'Authorization: Bearer KEY' on /v1/ (default: REALIZAR_API_KEY if set, else none)");
  cmd->add_option("--parallel", o->q.parallel, "Streams decoded together in one batch")->check(integer_in(1, 1024));
  cmd->add_option("-c,--ctx-size", o->ctx, "Context per stream, prompt + generated (0: the training context, at most 4096)")
      ->check(integer_in(0, kMaxContext));
  cmd->add_option("--max-queue", o->q.max_queue, "Requests waiting for a stream; beyond: 429 with Retry-After")->check(integer_in(0, 1 << 20));
  cmd->add_option("--max-tokens", o->q.max_tokens_cap, "Largest (and default) max_tokens of a request")->check(integer_in(1, 1 << 24));
  cmd->add_option("--prefill-chunk", o->q.prefill_chunk, "Most prompt tokens prefilled between two decode steps (bounds the running streams' stall)")
      ->check(integer_in(1, 1 << 16));
  cmd->add_option("--prefill-batch", o->q.prefill_batch,
                  "Most prompt tokens of several waiting prompts prefilled in one pass during a burst (default: --prefill-chunk "
                  "on the CPU, 2048 on a device)")
      ->check(integer_in(1, 1 << 16));
  cmd->add_option("--max-body", o->s.max_body, "Largest request body in bytes; beyond: 413")->check(integer_in(1024, 1LL << 30));
  cmd->add_option("--max-connections", o->s.max_connections, "Connections served at once (one thread each); beyond: 503")
      ->check(integer_in(1, 65536));
  cmd->add_option("--timeout", o->s.read_timeout_s, "Seconds a client may take to send a request or to read a chunk")->check(integer_in(1, 3600));
  cmd->add_option("--shutdown-timeout", o->shutdown_s, "Seconds in-flight streams may take to finish after SIGINT/SIGTERM")
      ->check(real_in(0, 3600));
  cmd->add_option("--chat-template", o->chat_template, "Chat template: a built-in name (" + [] {
    std::string n;
    for (const auto& b : ChatTemplate::builtin_names()) n += (n.empty() ? "" : ", ") + b;
    return n;
  }() + ") or a Jinja file (default: the model's tokenizer.chat_template, else chatml)");
  cmd->add_option("--model-id", o->s.model_id, "The model's name in /v1/models and responses (default: the file name)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (o->s.api_key.empty())
      if (const char* k = std::getenv("REALIZAR_API_KEY"); k != nullptr) o->s.api_key = k;
    const BackendChoice forced = o->m.apply();
    o->s.write_timeout_s = o->s.read_timeout_s;
    o->s.shutdown_grace = std::chrono::milliseconds(static_cast<long long>(o->shutdown_s * 1000));
    if (o->s.model_id.empty() || o->s.model_id == "realizar") {
      const auto slash = o->m.model.find_last_of('/');
      o->s.model_id = slash == std::string::npos ? o->m.model : o->m.model.substr(slash + 1);
    }

    // SIGINT/SIGTERM are taken by one thread (sigwait); every other thread, started after this, blocks them.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    const auto file = gguf::File::open(o->m.model);
    const Model model(file, Config::from_gguf(file));
    const auto tok = Tokenizer::from_gguf(file);
    o->s.chat_template = std::make_shared<const ChatTemplate>(!o->chat_template.empty()               ? ChatTemplate::from_name_or_file(o->chat_template)
                                                              : ChatTemplate::model_has_template(file) ? ChatTemplate::from_model(file)
                                                                                                       : ChatTemplate::builtin("chatml"));
    o->s.chat_context.bos_token = tok.token_text(tok.bos());
    o->s.chat_context.eos_token = tok.token_text(tok.eos());
    std::fprintf(stderr, "realizar: chat template: %s\n", o->s.chat_template->name().c_str());
    const std::size_t train = model.config().n_ctx_train;
    o->q.n_ctx = o->ctx > 0 ? static_cast<std::size_t>(o->ctx) : std::min<std::size_t>(train > 0 ? train : 4096, 4096);
    check_context(model.config(), o->q.n_ctx, "-c");

    // --backend DEVICE: the weights go there once and every stream is a sequence of them (Note [CUDA batched
    // step]); the parity gate is not run here: `realizar parity` checks a device first.
    if (forced.device) {
      o->q.weights = upload_weights(model, *forced.device, o->m.cuda());
      std::fprintf(stderr, "realizar: serving on %s\n", o->q.weights->backend_name().c_str());
      // A device's prompt pass reads every weight once whatever its length (a 7B model on the H200: ~12 ms
      // for 64 tokens, ~20 ms for 512), so 64-token chunks paid four passes for a 250-token prompt: 512
      // unless --prefill-chunk says otherwise (measured: docs/PERFORMANCE.md, realizar serve on the H200).
      if (cmd->count("--prefill-chunk") == 0) o->q.prefill_chunk = 512;
      // A burst's prompts share passes (Note [Joint prefill]): 2048 rows is what one pass takes at most.
      if (cmd->count("--prefill-batch") == 0) o->q.prefill_batch = 2048;
    } else if (cmd->count("--prefill-batch") == 0) {
      o->q.prefill_batch = o->q.prefill_chunk;
    }
    server::Metrics metrics;
    std::unique_ptr<server::Scheduler> owned;
    try {
      owned = std::make_unique<server::Scheduler>(model, tok, o->q, metrics);
    } catch (const std::bad_alloc&) {
      throw trueno::Error("cannot allocate the KV pool: " + std::to_string(o->q.parallel) + " streams x " + std::to_string(o->q.n_ctx) +
                          " positions (" + std::to_string(kv_cache_bytes(model.config(), o->q.n_ctx) * o->q.parallel >> 20) +
                          " MiB); lower --parallel or -c");
    }
    server::Scheduler& sched = *owned;
    metrics.queue_depth = [&] { return sched.queue_depth(); };
    metrics.active_streams = [&] { return sched.active_streams(); };
    metrics.kv_blocks_in_use = [&] { return sched.kv_blocks_in_use(); };
    metrics.kv_blocks_total = [&] { return sched.kv_blocks_total(); };
    server::HttpServer http(sched, tok, metrics, o->s);
    const int port = http.bind();
    if (o->q.weights)
      std::fprintf(stderr, "realizar: serving %s on %s: %zu streams x %zu positions, prompt chunks of %zu, passes of up to %zu tokens\n",
                   o->s.model_id.c_str(), o->q.weights->backend_name().c_str(), o->q.parallel, o->q.n_ctx, o->q.prefill_chunk,
                   o->q.prefill_batch);
    else
      std::fprintf(stderr, "realizar: serving %s on the CPU (%s, %d threads): %zu streams x %zu positions, KV pool %zu blocks of %zu\n",
                   o->s.model_id.c_str(), std::string(trueno::name(trueno::current_backend())).c_str(), trueno::num_threads(),
                   o->q.parallel, o->q.n_ctx, sched.kv_blocks_total(), o->q.kv_block);
    std::fprintf(stderr, "realizar: listening on http://%s:%d%s\n", o->s.host.c_str(), port, o->s.api_key.empty() ? "" : " (API key required)");
    std::fflush(stderr);

    std::atomic<bool> listening{true}, stopping{false};
    std::thread waiter([&] {
      int sig = 0;
      sigwait(&sigs, &sig);
      if (!listening) return;  // woken by the main thread below: listen() ended on its own
      stopping = true;
      std::fprintf(stderr, "realizar: %s: stopping (in-flight streams get %.0f s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM", o->shutdown_s);
      const std::size_t cancelled = http.shutdown();
      std::fprintf(stderr, "realizar: stopped%s\n", cancelled ? (" (" + std::to_string(cancelled) + " streams cancelled)").c_str() : "");
    });
    http.listen();
    if (listening.exchange(false) && !stopping) pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    return 0;
  };
}

}  // namespace realizar::cli
