// `realizar chat -m MODEL [--chat-template NAME|FILE] [--system TEXT] [-n N] [-c N] [sampling options]`:
// reads one user message per line from stdin (EOF ends), renders the whole conversation with the chat
// template and streams the assistant's reply to stdout, a newline after each. Note [Chat KV reuse]: the
// KV cache holds the text fed so far (the last prompt and the reply as generated); when the new
// rendering starts with that text only the rest is tokenized and fed, else the cache is read again.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.h"
#include "context.h"
#include "model_options.h"
#include "numbers.h"
#include "output.h"
#include "realizar/chat_template.h"
#include "realizar/model.h"
#include "realizar/parity.h"
#include "realizar/recorder.h"
#include "realizar/sampler.h"
#include "realizar/tokenizer.h"
#include "trueno/error.h"

namespace realizar::cli {
namespace {

struct ChatOpt {
  ModelOptions m;
  std::string chat_template, system;
  int n = 256, ctx = 0;
  SamplerOptions s;
};

}  // namespace

std::function<int()> add_chat_command(CLI::App& app) {
  auto o = std::make_shared<ChatOpt>();
  auto* cmd = app.add_subcommand("chat", "Chat: one user message per line on standard input, the replies on standard output");
  o->m.add_to(cmd);
  cmd->add_option("--chat-template", o->chat_template,
                  "Chat template: a built-in name (llama2, llama3, mistral, chatml, phi3, gemma) or a Jinja file; "
                  "overrides the model's tokenizer.chat_template")
      ->default_str("the model's");
  cmd->add_option("--system", o->system, "System message that opens the conversation")->default_str("none");
  cmd->add_option("-n,--n-predict", o->n, "Most tokens per reply (-1: until end of text or the context is full)")->check(integer_in(-1, INT_MAX));
  cmd->add_option("-c,--ctx-size", o->ctx, "Context size for the whole conversation (0: the training context)")->check(integer_in(0, kMaxContext));
  cmd->add_option("--temp", o->s.temperature, "Temperature (0: greedy)")->check(real_in(0, 100));
  cmd->add_option("--top-k", o->s.top_k, "Top-k (0: off)")->check(integer_in(0, INT_MAX));
  cmd->add_option("--top-p", o->s.top_p, "Top-p (1: off)")->check(real_in(0, 1, true));
  cmd->add_option("--min-p", o->s.min_p, "Min-p (0: off)")->check(real_in(0, 1, false, true));
  cmd->add_option("--repeat-penalty", o->s.repeat_penalty, "Repetition penalty over the last 64 tokens (1: off)")->check(real_in(0, 100, true));
  auto* seed = cmd->add_option("--seed", o->s.seed, "Random seed, printed on stderr")->check(unsigned_64());
  seed->default_str("random");
  return [cmd, o, seed]() -> int {
    if (!cmd->parsed()) return -1;
    const auto forced = o->m.apply();
    if (seed->count() == 0) o->s.seed = random_seed();
    std::fprintf(stderr, "realizar: seed %llu%s\n", static_cast<unsigned long long>(o->s.seed), seed->count() ? "" : " (random; --seed repeats this chat)");
    Sampler sampler(o->s);
    const auto file = gguf::File::open(o->m.model);
    // --chat-template overrides the model's template; without either there is nothing to render with.
    const ChatTemplate tmpl = !o->chat_template.empty()                 ? ChatTemplate::from_name_or_file(o->chat_template)
                              : ChatTemplate::model_has_template(file) ? ChatTemplate::from_model(file)
                                                                        : throw trueno::InvalidArgument(
                                                                              o->m.model + ": the model has no tokenizer.chat_template; "
                                                                              "give one with --chat-template NAME|FILE");
    std::fprintf(stderr, "realizar: chat template: %s\n", tmpl.name().c_str());
    const Model model(file, Config::from_gguf(file));
    const auto tok = Tokenizer::from_gguf(file);
    TemplateContext tctx;
    tctx.bos_token = tok.token_text(tok.bos());
    tctx.eos_token = tok.token_text(tok.eos());
    const std::size_t n_ctx = o->ctx > 0 ? static_cast<std::size_t>(o->ctx) : model.config().n_ctx_train;
    if (o->ctx > 0) check_context(model.config(), n_ctx, "-c");

    std::vector<ChatMessage> messages;
    if (!o->system.empty()) messages.push_back({"system", o->system});
    std::unique_ptr<Sequence> seq;
    std::vector<std::int32_t> cached;  // the tokens in the KV cache
    std::string fed;                   // the text they stand for
    const bool tty = isatty(STDIN_FILENO);
    std::string line;
    for (int turn = 1;; ++turn) {
      if (tty) std::fprintf(stderr, "> ");
      if (!std::getline(std::cin, line)) break;
      messages.push_back({"user", line});
      const std::string text = tmpl.render(messages, true, tctx);
      std::vector<std::int32_t> fresh;
      std::size_t reused = 0;
      if (seq && !cached.empty() && text.size() > fed.size() && text.starts_with(fed)) {
        fresh = tok.encode(text.substr(fed.size()), false, true);
        reused = cached.size();
      } else {
        const bool has_bos = !tctx.bos_token.empty() && text.starts_with(tctx.bos_token);
        fresh = tok.encode(text, !has_bos, true);
        cached.clear();
        if (seq) seq->reset();
      }
      if (fresh.empty()) throw trueno::InvalidArgument("turn " + std::to_string(turn) + ": the rendered prompt adds no tokens");
      if (cached.size() + fresh.size() + 1 > n_ctx)
        throw trueno::InvalidArgument("turn " + std::to_string(turn) + ": the conversation (" + std::to_string(cached.size() + fresh.size()) +
                                      " tokens) no longer fits the context of " + std::to_string(n_ctx) + " positions (-c)");
      if (!seq) {  // the first prompt picks the backend (parity gate), as in `run`
        auto opened = open_sequence(o->m, model, file, n_ctx, fresh, forced);
        const bool on_gpu = dynamic_cast<const Session*>(opened.get()) == nullptr;
        const auto say = [](const std::string& l) { std::fprintf(stderr, "\nrealizar: %s\n", l.c_str()); };
        seq = with_finite_check(on_gpu ? parity::with_cpu_fallback(model, std::move(opened), say) : std::move(opened));
      }
      seq->forward(fresh);
      cached.insert(cached.end(), fresh.begin(), fresh.end());
      fed = text;

      Utf8Stream utf8;
      std::string reply;
      int generated = 0;
      while (o->n < 0 || generated < o->n) {
        const std::int32_t next = seq->sample(sampler, cached);
        if (tok.is_end_of_generation(next)) break;
        ++generated;
        const std::string piece = utf8.push(tok.piece(next));
        reply += piece;
        emit(piece);
        if (seq->pos() >= seq->n_ctx()) break;  // full: the next turn reports it
        cached.push_back(next);                 // fed even at the -n limit: the cache holds the whole reply
        seq->forward(std::span(&cached.back(), 1));
      }
      const std::string rest = utf8.flush();
      reply += rest;
      emit(rest + "\n");
      fed += reply;
      messages.push_back({"assistant", reply});
      std::fprintf(stderr, "realizar: turn %d: %zu tokens reused from the cache, %zu new prompt tokens, %d generated (%s)\n", turn, reused,
                   fresh.size(), generated, seq->backend_name().c_str());
    }
    return 0;
  };
}

}  // namespace realizar::cli
