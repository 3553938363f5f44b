// `realizar run -m MODEL (-p PROMPT | -p - | -f FILE) [-n N] [--stop S]... [sampling options] [--json]`:
// streams the continuation to stdout (or prints one JSON object with --json); load time, prompt and
// generation speed, memory and why generation stopped to stderr.
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "commands.h"
#include "context.h"
#include "model_options.h"
#include "numbers.h"
#include "output.h"
#include "realizar/model.h"
#include "realizar/parity.h"
#include "realizar/recorder.h"
#include "realizar/sampler.h"
#include "realizar/tokenizer.h"
#include "util/stop_strings.h"
#include "text_input.h"
#include "trueno/error.h"
#include "trueno/threads.h"

namespace realizar::cli {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Peak resident set size (VmHWM) in MiB, or -1 when /proc is not there.
double peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

struct Opt {
  ModelOptions m;
  std::string prompt, prompt_file;
  int n = 128, ctx = 0;
  SamplerOptions s;
  std::vector<std::string> stop;
  bool json = false;
};

struct Timings {
  double load_s = 0, prompt_s = 0, gen_s = 0;
};

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  o->m.add_to(cmd);
  o->m.add_tensor_parallel_to(cmd);
  auto* p = cmd->add_option("-p,--prompt", o->prompt, "Prompt text; - reads it from standard input");
  auto* f = cmd->add_option("-f,--file", o->prompt_file, "File whose bytes are the prompt");
  p->excludes(f);
  cmd->add_option("-n,--n-predict", o->n, "Tokens to generate (-1: until end of text or the context is full)")
      ->check(integer_in(-1, INT_MAX));
  cmd->add_option("-c,--ctx-size", o->ctx, "Context size (0: prompt + n, at most the training context; with -n -1 the training context)")
      ->check(integer_in(0, kMaxContext));
  cmd->add_option("--temp", o->s.temperature, "Temperature (0: greedy)")->check(real_in(0, 100));
  cmd->add_option("--top-k", o->s.top_k, "Top-k (0: off)")->check(integer_in(0, INT_MAX));
  cmd->add_option("--top-p", o->s.top_p, "Top-p (1: off)")->check(real_in(0, 1, true));
  cmd->add_option("--min-p", o->s.min_p, "Min-p (0: off)")->check(real_in(0, 1, false, true));
  cmd->add_option("--repeat-penalty", o->s.repeat_penalty, "Repetition penalty over the last 64 tokens (1: off, as in llama.cpp; e.g. 1.1)")->check(real_in(0, 100, true));
  auto* seed = cmd->add_option("--seed", o->s.seed, "Random seed, printed on stderr (same seed, same text)")->check(unsigned_64());
  seed->default_str("random");
  cmd->add_option("--stop", o->stop, "Stop when the text contains this string (repeatable; not printed)")
      ->default_str("none")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--json", o->json, "Print one JSON object (text, tokens, timings, backend) instead of streaming");
  return [cmd, o, p, f, seed]() -> int {
    if (!cmd->parsed()) return -1;
    if (p->count() == 0 && f->count() == 0) throw CLI::RequiredError("--prompt or --file");
    if (f->count() || o->prompt == "-") o->prompt = read_text(f->count() ? o->prompt_file : "-", f->count() ? "--file" : "--prompt");
    const auto forced = o->m.apply();
    if (seed->count() == 0) o->s.seed = random_seed();
    std::fprintf(stderr, "realizar: seed %llu%s\n", static_cast<unsigned long long>(o->s.seed),
                 seed->count() ? "" : " (random; --seed repeats this run)");
    Sampler sampler(o->s);
    Timings t;
    const auto t_load = Clock::now();
    const auto file = gguf::File::open(o->m.model);
    const Model model(file, Config::from_gguf(file));
    const auto tok = Tokenizer::from_gguf(file);

    std::vector<std::int32_t> ids = tok.encode(o->prompt, true);
    if (ids.empty()) throw CLI::ValidationError("--prompt", "is empty and this vocabulary adds no BOS token: nothing to continue");
    const std::size_t limit = model.config().n_ctx_train;
    std::size_t ctx = o->ctx > 0  ? static_cast<std::size_t>(o->ctx)
                      : o->n < 0 ? std::max(limit, ids.size() + 1)
                                 : std::min(limit, ids.size() + static_cast<std::size_t>(o->n));
    if (ids.size() + 1 > ctx && o->n != 0)
      throw trueno::InvalidArgument("the prompt (" + std::to_string(ids.size()) + " tokens) leaves no room in a context of " + std::to_string(ctx) + " positions (-c)");
    if (o->ctx > 0) check_context(model.config(), ctx, "-c");
    // CUDA: uploads the weights and runs the parity gate; a GPU fault later continues on the CPU.
    auto opened = open_sequence(o->m, model, file, std::max<std::size_t>(ctx, ids.size()), ids, forced);
    const bool on_gpu = dynamic_cast<const Session*>(opened.get()) == nullptr && !o->m.tensor_parallel_on_cpu();
    const auto say = [](const std::string& line) { std::fprintf(stderr, "\nrealizar: %s\n", line.c_str()); };
    // Outermost, the finite check: NaN logits stop the request naming the first non-finite tensor.
    const auto seq = with_finite_check(on_gpu ? parity::with_cpu_fallback(model, std::move(opened), say) : std::move(opened));
    Sequence& session = *seq;
    t.load_s = seconds_since(t_load);

    const auto t_prompt = Clock::now();
    session.forward(ids);
    t.prompt_s = seconds_since(t_prompt);
    const std::size_t n_prompt = ids.size();

    if (!o->json) emit(o->prompt);  // the text continues the prompt
    Utf8Stream utf8;
    StopStrings stops(o->stop);
    std::string text;
    auto put = [&](const std::string& s) {
      text += s;
      if (!o->json) emit(s);
    };
    const auto t_gen = Clock::now();
    int generated = 0;
    std::string why = "length";  // the -n limit
    while (o->n < 0 || generated < o->n) {
      const std::int32_t next = session.sample(sampler, ids);
      if (tok.is_end_of_generation(next)) {
        why = "eos";
        break;
      }
      ids.push_back(next);
      ++generated;
      put(stops.push(utf8.push(tok.piece(next))));
      if (stops.stopped()) {
        why = "stop";
        break;
      }
      if (o->n >= 0 && generated >= o->n) break;
      if (session.pos() >= session.n_ctx()) {
        why = "context";
        break;
      }
      session.forward(std::span(&ids.back(), 1));
    }
    if (!stops.stopped()) put(stops.push(utf8.flush()) + stops.flush());
    t.gen_s = seconds_since(t_gen);
    if (why == "context")
      std::fprintf(stderr, "%srealizar: the context is full (%zu positions: %zu prompt + %d generated); -c sets its size (trained: %zu)\n",
                   o->json ? "" : "\n", session.n_ctx(), n_prompt, generated, limit);
    const std::string backend = session.backend_name();
    if (o->json) {
      const nlohmann::json j = {
          {"text", text}, {"tokens", std::vector<std::int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(n_prompt), ids.end())},
          {"prompt", o->prompt}, {"n_prompt", n_prompt}, {"n_generated", generated}, {"stop", why},
          {"seed", o->s.seed}, {"backend", backend}, {"threads", trueno::num_threads()}, {"n_ctx", session.n_ctx()},
          {"timings", {{"load_ms", t.load_s * 1e3}, {"prompt_ms", t.prompt_s * 1e3}, {"generation_ms", t.gen_s * 1e3},
                       {"prompt_tokens_per_second", n_prompt / t.prompt_s},
                       {"generation_tokens_per_second", generated > 0 ? generated / t.gen_s : 0.0}}}};
      emit(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      return 0;
    }
    emit("\n");
    std::fprintf(stderr, "\nbackend: %s | threads: %d | load: %.1f ms | prompt: %zu tokens, %.1f tok/s | generation: %d tokens, %.1f tok/s\n",
                 backend.c_str(), trueno::num_threads(), t.load_s * 1e3, n_prompt, n_prompt / t.prompt_s, generated,
                 generated > 0 ? generated / t.gen_s : 0.0);
    const bool gpu = backend.starts_with("cuda");
    std::fprintf(stderr, "memory: model %.1f MiB (mapped%s) + KV cache %.2f MiB%s (%zu positions) | peak RSS %.1f MiB\n",
                 file.file_size() / 1048576.0, gpu ? "; its weights also on the GPU" : "", session.kv_bytes() / 1048576.0,
                 gpu ? " on the GPU" : "", session.n_ctx(), peak_rss_mib());
    return 0;
  };
}

}  // namespace realizar::cli
