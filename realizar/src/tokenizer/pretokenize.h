// Byte-level BPE pre-tokenization: the text is split into words by a sequence of Unicode-aware regexes
// (PCRE2, UTF + UCP), chosen by the vocabulary's `tokenizer.ggml.pre`. Each regex splits every current
// fragment into its matches and the text between them; both are kept.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace realizar {

class PreTokenizer {
 public:
  // Throws FormatError listing the supported names for an unknown one.
  static PreTokenizer for_name(const std::string& pre);
  std::vector<std::string> split(std::string_view text) const;
  bool ignore_merges() const { return ignore_merges_; }  // llama-bpe: a word that is a token stays whole
  const std::string& name() const { return name_; }

  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

 private:
  PreTokenizer() = default;
  struct Regex;
  std::vector<std::unique_ptr<Regex>> regexes_;
  std::string name_;
  bool ignore_merges_ = false;
};

// Invalid UTF-8 sequences replaced by U+FFFD (the regexes need valid UTF-8).
std::string valid_utf8(std::string_view text);

}  // namespace realizar
