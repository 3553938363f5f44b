// `realizar tokenize -m MODEL [--no-bos] [--parse-special] (--text T | --text-file F)`: ids on one line.
#include <cstdio>

#include "commands.h"
#include "text_input.h"
#include "realizar/gguf.h"
#include "realizar/tokenizer.h"
#include "trueno/error.h"

namespace realizar::cli {

std::function<int()> add_tokenize_command(CLI::App& app) {
  struct Opt {
    std::string model, text, text_file;
    bool no_bos = false, parse_special = false;
  };
  auto o = std::make_shared<Opt>();
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of a text, space-separated");
  cmd->add_option("-m,--model", o->model, "GGUF model or vocabulary file")->required();
  auto* t = cmd->add_option("--text", o->text, "Text to tokenize");
  auto* tf = cmd->add_option("--text-file", o->text_file, "File whose bytes are tokenized exactly (-: standard input)");
  t->excludes(tf);
  cmd->add_flag("--no-bos", o->no_bos, "Do not add the BOS token");
  cmd->add_flag("--parse-special", o->parse_special, "Turn special-token text (e.g. </s>) into those tokens");
  return [cmd, o, t, tf]() -> int {
    if (!cmd->parsed()) return -1;
    if (t->count() == 0 && tf->count() == 0) throw CLI::RequiredError("--text or --text-file");
    std::string text = o->text;
    if (tf->count()) {
      text = read_text(o->text_file, "--text-file");
    }
    const auto file = gguf::File::open(o->model);
    const auto tok = Tokenizer::from_gguf(file);
    const auto ids = tok.encode(text, !o->no_bos, o->parse_special);
    for (std::size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
    return 0;
  };
}

}  // namespace realizar::cli
