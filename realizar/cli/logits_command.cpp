// `realizar logits -m MODEL --tokens 1,2,3 --out FILE`: float32 little-endian [n_tokens][n_vocab];
// row i = the logits after consuming tokens 0..i (teacher forcing, one batched pass).
#include <cstdio>
#include <sstream>

#include "commands.h"
#include "context.h"
#include "model_options.h"
#include "realizar/model.h"
#include "realizar/recorder.h"
#include "trueno/error.h"
#include "util/atomic_file.h"

namespace realizar::cli {

std::function<int()> add_logits_command(CLI::App& app) {
  struct Opt {
    ModelOptions m;
    std::string tokens, out;
  };
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("logits", "Write the logits of every position of a token sequence");
  o->m.add_to(cmd);
  o->m.add_tensor_parallel_to(cmd);
  cmd->add_option("--tokens", o->tokens, "Comma-separated token ids")->required();
  cmd->add_option("--out", o->out, "Output file (float32 little-endian [n_tokens][n_vocab])")->required();
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const auto forced = o->m.apply();
    std::vector<std::int32_t> ids;
    std::stringstream ss(o->tokens);
    for (std::string item; std::getline(ss, item, ',');) {
      std::size_t used = 0;
      long v = -1;
      try {
        v = std::stol(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || v < 0 || v > 0x7fffffff)
        throw CLI::ValidationError("--tokens", "'" + item + "' is not a token id");
      ids.push_back(static_cast<std::int32_t>(v));
    }
    if (ids.empty()) throw CLI::ValidationError("--tokens", "no token ids");
    if (same_file(o->out, o->m.model))
      throw CLI::ValidationError("--out", o->out + " is the model file (-m): refusing to overwrite the model with logits");
    const auto file = gguf::File::open(o->m.model);
    const Model model(file, Config::from_gguf(file));
    check_context(model.config(), ids.size(), "--tokens");
    const auto seq = with_finite_check(open_sequence(o->m, model, file, ids.size(), ids, forced));
    Sequence& session = *seq;
    session.forward(ids, true);
    AtomicFile f(o->out);
    const auto l = session.logits();
    f.write(l.data(), l.size() * sizeof(float));
    f.commit();
    std::fprintf(stderr, "wrote %zu x %u logits to %s\n", ids.size(), model.config().n_vocab, o->out.c_str());
    return 0;
  };
}

}  // namespace realizar::cli
