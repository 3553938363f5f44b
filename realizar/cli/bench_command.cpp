// `realizar bench -m MODEL [-p 512] [-n 128] [-r 3] [-t N] [--backend B] [--json]`: prompt processing
// (pp: one batch of p tokens from an empty context) and generation (tg: n single-token steps from an
// empty context) throughput, mean +- sd over r runs after one warm-up, as the usual llama-bench table.
// --batch 1,4,16,64 adds tg tests of that many sequences stepped together (Note [Batched step]): the
// aggregate tokens/s of n steps from an empty context, every sequence on the same weights.
// -d 4096,16384 repeats pp and tg after that many positions already in the context ("tg128 @ d16384":
// decode attending over 16K positions), the depth's prompt run untimed before each repetition.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "context.h"
#include "numbers.h"
#include "model_options.h"
#include "realizar/kv_cache.h"
#include "realizar/model.h"
#include "realizar/recorder.h"
#include "trueno/threads.h"

namespace realizar::cli {
namespace {

struct Result {
  std::string test;
  int n_prompt, n_gen, n_depth;
  double mean, sd;
};

double seconds(const std::function<void()>& f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Result measure(const std::string& name, int n_prompt, int n_gen, int n_depth, int reps, const std::function<double()>& tokens_per_second) {
  tokens_per_second();  // warm-up: page in the mapped weights, grow scratch buffers
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) v.push_back(tokens_per_second());
  double mean = 0, sd = 0;
  for (double x : v) mean += x / v.size();
  for (double x : v) sd += (x - mean) * (x - mean);
  sd = v.size() > 1 ? std::sqrt(sd / (v.size() - 1)) : 0;
  return {name, n_prompt, n_gen, n_depth, mean, sd};
}

}  // namespace

std::function<int()> add_bench_command(CLI::App& app) {
  struct Opt {
    ModelOptions m;
    int p = 512, n = 128, r = 3, ctx = 0;
    bool json = false;
    std::vector<int> batch, depth{0};
  };
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("bench", "Measure prompt-processing and generation speed (tokens/s)");
  o->m.add_to(cmd);
  cmd->add_option("-p,--n-prompt", o->p, "Prompt tokens (0: skip the pp test)")->check(integer_in(0, kMaxContext));
  cmd->add_option("-n,--n-gen", o->n, "Generated tokens (0: skip the tg test)")->check(integer_in(0, kMaxContext));
  cmd->add_option("-r,--repetitions", o->r, "Repetitions")->check(integer_in(1, 1000000));
  cmd->add_option("-c,--ctx-size", o->ctx, "Context to allocate (0: the larger of -p and -n)")->check(integer_in(0, kMaxContext));
  cmd->add_flag("--json", o->json, "Print a JSON array instead of the table");
  cmd->add_option("-d,--depth", o->depth, "Run pp and tg after this many positions already in the context (e.g. 0,4096,16384)")
      ->delimiter(',')
      ->check(integer_in(0, kMaxContext));
  cmd->add_option("--batch", o->batch, "Also measure aggregate generation of this many sequences stepped together (e.g. 1,4,16,64)")
      ->delimiter(',')
      ->check(integer_in(1, 4096));
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const auto forced = o->m.apply();
    const auto file = gguf::File::open(o->m.model);
    const Model model(file, Config::from_gguf(file));
    const auto& c = model.config();
    const int max_depth = *std::max_element(o->depth.begin(), o->depth.end()), need = std::max(o->p, o->n) + max_depth;
    if (o->ctx != 0 && o->ctx < need)
      throw trueno::InvalidArgument("bench: --ctx-size " + std::to_string(o->ctx) + " is smaller than the " + std::to_string(need) +
                                    " positions a test runs");
    const std::size_t ctx = static_cast<std::size_t>(o->ctx != 0 ? o->ctx : std::max(1, need));
    std::mt19937 rng(1);
    std::vector<std::int32_t> prompt(static_cast<std::size_t>(o->p)), history(static_cast<std::size_t>(max_depth));
    for (auto& t : prompt) t = static_cast<std::int32_t>(rng() % c.n_vocab);
    for (auto& t : history) t = static_cast<std::int32_t>(rng() % c.n_vocab);
    check_context(c, ctx, "--ctx-size");
    const auto seq = with_finite_check(open_sequence(o->m, model, file, ctx, prompt, forced));
    Sequence& session = *seq;
    std::vector<Result> results;
    for (const int d : o->depth) {
      const std::string at = d == 0 ? "" : " @ d" + std::to_string(d);
      const auto restart = [&] {  // an empty context, then the depth's positions (untimed)
        session.reset();
        if (d > 0) session.forward(std::span(history).first(static_cast<std::size_t>(d)));
      };
      if (o->p > 0)
        results.push_back(measure("pp" + std::to_string(o->p) + at, o->p, 0, d, o->r, [&] {
          restart();
          return o->p / seconds([&] { session.forward(prompt); });
        }));
      if (o->n > 0)
        results.push_back(measure("tg" + std::to_string(o->n) + at, 0, o->n, d, o->r, [&] {
          restart();
          std::int32_t tok = 1;
          return o->n / seconds([&] {
            for (int i = 0; i < o->n; ++i) {
              session.forward(std::span(&tok, 1));
              tok = static_cast<std::int32_t>((tok * 7 + 3) % static_cast<std::int32_t>(c.n_vocab));
            }
          });
        }));
    }
    for (const int B : o->batch) {
      if (o->n <= 0) break;
      // Every sequence on one set of weights: a device's upload (the forced device) or the mapped file.
      std::shared_ptr<DeviceWeights> weights;
      if (forced.device) weights = upload_weights(model, *forced.device, o->m.cuda());
      auto pool = std::make_shared<KvPool>(c, 64, static_cast<std::size_t>(B) * ((ctx + 63) / 64));
      std::vector<std::unique_ptr<Sequence>> seqs;
      for (int i = 0; i < B; ++i)
        seqs.push_back(weights ? weights->new_sequence(ctx) : std::make_unique<Session>(model, ctx, pool));
      std::unique_ptr<Batch> batch = weights ? weights->new_batch() : std::make_unique<CpuBatch>(model);
      std::vector<Sequence*> ptrs;
      for (auto& q : seqs) ptrs.push_back(q.get());
      results.push_back(measure("tg" + std::to_string(o->n) + "x" + std::to_string(B), 0, o->n * B, 0, o->r, [&] {
        for (auto& q : seqs) q->reset();
        std::vector<std::int32_t> toks(static_cast<std::size_t>(B));
        for (int i = 0; i < B; ++i) toks[static_cast<std::size_t>(i)] = 1 + i % static_cast<int>(c.n_vocab - 1);
        return static_cast<double>(o->n) * B / seconds([&] {
          for (int i = 0; i < o->n; ++i) {
            batch->step(ptrs, toks);
            for (auto& t : toks) t = static_cast<std::int32_t>((t * 7 + 3) % static_cast<std::int32_t>(c.n_vocab));
          }
        });
      }));
    }
    const std::string backend = session.backend_name();
    const int threads = trueno::num_threads();
    if (o->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& r : results)
        out.push_back({{"test", r.test}, {"n_prompt", r.n_prompt}, {"n_gen", r.n_gen}, {"n_depth", r.n_depth}, {"backend", backend}, {"threads", threads},
                       {"tokens_per_second", r.mean}, {"stddev", r.sd}, {"model", o->m.model},
                       {"model_size", file.file_size()}, {"bytes_per_token", bytes_per_token(file, c)}});
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    std::printf("| %-40s | %10s | %-8s | %7s | %14s | %20s |\n", "model", "size", "backend", "threads", "test", "t/s");
    std::printf("| %s | %s | %s | %s | %s | %s |\n", std::string(40, '-').c_str(), std::string(10, '-').c_str(),
                std::string(8, '-').c_str(), std::string(7, '-').c_str(), std::string(14, '-').c_str(), std::string(20, '-').c_str());
    const std::string name = model.file().get_string("general.name", c.arch_name);
    for (const auto& r : results)
      std::printf("| %-40.40s | %6.2f GiB | %-8s | %7d | %14s | %11.2f ± %6.2f |\n", name.c_str(), file.file_size() / 1073741824.0,
                  backend.c_str(), threads, r.test.c_str(), r.mean, r.sd);
    return 0;
  };
}

}  // namespace realizar::cli
