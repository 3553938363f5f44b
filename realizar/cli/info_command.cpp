// `realizar info -m MODEL`: architecture, hyperparameters, tokenizer, tensor-type histogram, bytes per token.
#include <cstdio>
#include <map>
#include <string>

#include "commands.h"
#include "realizar/gguf.h"
#include "realizar/model.h"
#include "realizar/tokenizer.h"
#include <optional>

namespace realizar::cli {

std::function<int()> add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show a GGUF model's architecture, hyperparameters, tokenizer and tensors");
  auto path = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", *path, "GGUF model file")->required();
  cmd->add_flag("--metadata", *all, "Also print every metadata key");
  return [cmd, path, all]() -> int {
    if (!cmd->parsed()) return -1;
    const auto file = gguf::File::open(*path);
    std::printf("file: %s (GGUF v%u, %llu bytes, %zu tensors, %zu metadata keys)\n", path->c_str(), file.version(),
                static_cast<unsigned long long>(file.file_size()), file.tensors().size(), file.metadata().size());
    if (*all)
      for (const auto& [k, v] : file.metadata()) std::printf("  %s = %s\n", k.c_str(), v.to_string().c_str());
    std::optional<Config> c;
    try {
      c = Config::from_gguf(file);
      std::printf("%s", c->describe().c_str());
    } catch (const FormatError& e) {  // e.g. a vocabulary-only file: still show the tokenizer
      std::printf("model: not loadable: %s\n", e.what());
    }
    if (file.find("tokenizer.ggml.model") != nullptr) std::printf("%s", Tokenizer::from_gguf(file).describe().c_str());
    std::map<std::string, std::pair<std::size_t, std::uint64_t>> hist;
    for (const auto& t : file.tensors()) {
      auto& h = hist[std::string(trueno::quant_info(t.type).name)];
      h.first++, h.second += t.bytes;
    }
    std::printf("tensor types:");
    for (const auto& [name, h] : hist) std::printf(" %s x%zu (%.2f MiB)", name.c_str(), h.first, h.second / 1048576.0);
    std::printf("\n");
    if (c) std::printf("weight bytes read per decoded token: %llu\n", static_cast<unsigned long long>(bytes_per_token(file, *c)));
    return 0;
  };
}

}  // namespace realizar::cli
