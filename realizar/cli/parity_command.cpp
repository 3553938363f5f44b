// `realizar parity -m MODEL [-p PROMPT] [--layers]`: the parity gate's table (Note [Parity gate]): for
// every GPU backend of this machine, the cosine of its logits against the CPU's at each probe position,
// max |d|, the argmaxes, the verdict and the time. Runs the gate afresh (no cache). --layers adds the
// layer trace (Note [Layer trace]): every named intermediate's worst cosine and the first divergence.
#include <cstdio>

#include "commands.h"
#include "model_options.h"
#include "realizar/model.h"
#include "realizar/parity.h"
#include "realizar/recorder.h"
#include "realizar/tokenizer.h"
#include "trueno/device.h"

namespace realizar::cli {

std::function<int()> add_parity_command(CLI::App& app) {
  struct Opt {
    ModelOptions m;
    std::string prompt;
    bool layers = false;
  };
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("parity", "Compare every GPU backend's logits with the CPU's (the parity gate's table)");
  o->m.add_to(cmd);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt whose first tokens are the probe (default: a fixed probe)");
  cmd->add_flag("--layers", o->layers, "Also compare every layer's named intermediates and name the first that diverges");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const BackendChoice forced = o->m.apply();
    const auto file = gguf::File::open(o->m.model);
    const Model model(file, Config::from_gguf(file));
    std::vector<std::int32_t> ids;
    if (!o->prompt.empty()) ids = Tokenizer::from_gguf(file).encode(o->prompt, true);
    const auto candidates = parity::gpu_candidates(model, o->m.cuda(), forced.device);
    if (candidates.empty()) {
      std::printf("no device to check:\n");
      for (const auto& s : trueno::device_report())
        std::printf("  %s: %s%s\n", s.device.str().c_str(), s.available ? "" : "unavailable: ", s.detail.c_str());
      return 0;
    }
    const auto verdicts = parity::check_all(model, candidates, ids);
    std::printf("probe: %zu positions; a position passes at cosine >= %.2f, the backend with argmax agreement >= %.2f "
                "(contracts/gpu-parity.yaml)\n\n",
                parity::probe_tokens(model, ids).size(), parity::kMinCosine, parity::kMinArgmaxAgreement);
    std::printf("| backend | position | cosine | max |d| | argmax cpu | argmax gpu |\n| --- | --- | --- | --- | --- | --- |\n");
    for (const auto& v : verdicts)
      for (const auto& p : v.positions)
        std::printf("| %s | %zu | %.6f | %.3e | %d | %d%s |\n", v.backend.c_str(), p.pos, p.cosine, p.max_abs, p.argmax_cpu, p.argmax_gpu,
                    p.argmax_cpu == p.argmax_gpu ? "" : " (differs)");
    std::printf("\n");
    if (o->layers) {
      std::printf("| backend | tensor | worst cosine | at position | max |d| |\n| --- | --- | --- | --- | --- |\n");
      const auto traces = parity::check_layers(model, candidates, ids);
      for (const auto& t : traces)
        for (const auto& c : t.tensors)
          std::printf("| %s | %s | %.6f | %zu | %.3e |\n", t.backend.c_str(), tensor_label(c.layer, c.tensor).c_str(), c.cosine, c.pos,
                      c.max_abs);
      std::printf("\n");
      for (const auto& t : traces) std::printf("%s: %s\n", t.backend.c_str(), t.summary().c_str());
    }
    int failed = 0;
    for (const auto& v : verdicts) {
      std::printf("%s\n", v.summary().c_str());
      failed += !v.passed;
    }
    return failed == 0 ? 0 : 3;
  };
}

}  // namespace realizar::cli
