// `realizar synth --arch A --preset P --quant Q --out FILE [--seed S]`: a random-weight GGUF of a
// preset's exact shapes, with a progress bar on stderr.
#include <cstdio>

#include "commands.h"
#include "numbers.h"
#include "realizar/synth.h"

namespace realizar::cli {

std::function<int()> add_synth_command(CLI::App& app) {
  auto o = std::make_shared<SynthOptions>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("synth", "Write a GGUF model with a preset's shapes and random weights (for benchmarks)");
  cmd->add_option("--arch", o->arch, "llama | qwen2")->check(CLI::IsMember({"llama", "qwen2"}));
  cmd->add_option("--preset", o->preset, "tiny | llama-1b | llama-7b | llama-13b")
      ->check(CLI::IsMember({"tiny", "llama-1b", "llama-7b", "llama-13b"}));
  cmd->add_option("--quant", o->quant, "f32 | f16 | q8_0 | q4_0 | q4_k_m | q6_k")
      ->check(CLI::IsMember({"f32", "f16", "q8_0", "q4_0", "q4_k_m", "q6_k"}));
  cmd->add_option("--out", *out, "Output file")->required();
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same bytes)")->check(unsigned_64());
  return [cmd, o, out]() -> int {
    if (!cmd->parsed()) return -1;
    int shown = -1;
    const std::uint64_t size = synthesize(*o, *out, [&](std::uint64_t done, std::uint64_t total) {
      const int pct = static_cast<int>(100 * done / std::max<std::uint64_t>(1, total));
      if (pct == shown) return;
      shown = pct;
      std::fprintf(stderr, "\r[%-50s] %3d%% %8.1f / %.1f MiB", std::string(pct / 2, '#').c_str(), pct, done / 1048576.0,
                   total / 1048576.0);
    });
    std::fprintf(stderr, "\nwrote %s: %llu bytes (%.2f GiB)\n", out->c_str(), static_cast<unsigned long long>(size),
                 size / 1073741824.0);
    return 0;
  };
}

}  // namespace realizar::cli
