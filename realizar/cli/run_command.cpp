// `realizar run -m MODEL -p PROMPT [-n N] [sampling options]`: streams the continuation to stdout;
// load time, prompt and generation speed, and memory to stderr.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "commands.h"
#include "model_options.h"
#include "realizar/model.h"
#include "realizar/parity.h"
#include "realizar/recorder.h"
#include "realizar/sampler.h"
#include "realizar/tokenizer.h"
#include "trueno/error.h"

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

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  struct Opt {
    ModelOptions m;
    std::string prompt;
    int n = 128, ctx = 0;
    SamplerOptions s;
  };
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  o->m.add_to(cmd);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", o->n, "Tokens to generate (stops early at end of text)")->check(CLI::NonNegativeNumber);
  cmd->add_option("-c,--ctx-size", o->ctx, "Context size (default: prompt + n, at most the training context)");
  cmd->add_option("--temp", o->s.temperature, "Temperature (0: greedy)");
  cmd->add_option("--top-k", o->s.top_k, "Top-k (0: off)");
  cmd->add_option("--top-p", o->s.top_p, "Top-p (1: off)");
  cmd->add_option("--min-p", o->s.min_p, "Min-p (0: off)");
  cmd->add_option("--repeat-penalty", o->s.repeat_penalty, "Repetition penalty over the last 64 tokens (1: off)");
  cmd->add_option("--seed", o->s.seed, "Random seed (same seed, same text)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const auto forced = o->m.apply();
    Sampler sampler(o->s);
    const auto t_load = Clock::now();
    const auto file = gguf::File::open(o->m.model);
    const Model model(file, Config::from_gguf(file));
    const auto tok = Tokenizer::from_gguf(file);

    std::vector<std::int32_t> ids = tok.encode(o->prompt, true);
    if (ids.empty()) throw CLI::ValidationError("--prompt", "is empty and this vocabulary adds no BOS token: nothing to continue");
    const std::size_t limit = model.config().n_ctx_train;
    std::size_t ctx = o->ctx > 0 ? static_cast<std::size_t>(o->ctx) : std::min(limit, ids.size() + o->n);
    if (ids.size() + 1 > ctx && o->n > 0)
      throw trueno::InvalidArgument("the prompt (" + std::to_string(ids.size()) + " tokens) leaves no room in a context of " + std::to_string(ctx) + " positions (-c)");
    // CUDA: uploads the weights and runs the parity gate; a GPU fault later continues on the CPU.
    auto opened = o->m.open(model, file, std::max<std::size_t>(ctx, ids.size()), ids, forced);
    const bool on_gpu = opened->backend_name().starts_with("cuda");
    const auto say = [](const std::string& line) { std::fprintf(stderr, "\nrealizar: %s\n", line.c_str()); };
    // Outermost, the finite check: NaN logits stop the request naming the first non-finite tensor.
    const auto seq = with_finite_check(on_gpu ? parity::with_cpu_fallback(model, std::move(opened), say) : std::move(opened));
    Sequence& session = *seq;
    const double load_s = seconds_since(t_load);

    const auto t_prompt = Clock::now();
    session.forward(ids);
    const double prompt_s = seconds_since(t_prompt);
    const std::size_t n_prompt = ids.size();

    std::fwrite(o->prompt.data(), 1, o->prompt.size(), stdout);  // the text continues the prompt
    Utf8Stream out;
    const auto t_gen = Clock::now();
    int generated = 0;
    for (; generated < o->n; ++generated) {
      const std::int32_t next = sampler.sample(session.logits(), ids);
      if (tok.is_end_of_generation(next)) break;
      ids.push_back(next);
      const std::string text = out.push(tok.piece(next));
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      if (session.pos() >= session.n_ctx()) {
        ++generated;
        break;
      }
      session.forward(std::span(&ids.back(), 1));
    }
    const std::string rest = out.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::printf("\n");
    const double gen_s = seconds_since(t_gen);
    std::fprintf(stderr, "\nbackend: %s | load: %.1f ms | prompt: %zu tokens, %.1f tok/s | generation: %d tokens, %.1f tok/s\n", session.backend_name().c_str(), load_s * 1e3,
                 n_prompt, n_prompt / prompt_s, generated, generated > 0 ? generated / gen_s : 0.0);
    const bool gpu = session.backend_name().starts_with("cuda");
    std::fprintf(stderr, "memory: model %.1f MiB (mapped%s) + KV cache %.2f MiB%s (%zu positions) | peak RSS %.1f MiB\n",
                 file.file_size() / 1048576.0, gpu ? "; its weights also on the GPU" : "", session.kv_bytes() / 1048576.0,
                 gpu ? " on the GPU" : "", session.n_ctx(), peak_rss_mib());
    return 0;
  };
}

}  // namespace realizar::cli
