// Byte-level BPE pre-tokenization: the text is split into words by a sequence of Unicode-aware regexes
// (PCRE2's, UTF + UCP), chosen by the vocabulary's `tokenizer.ggml.pre`. Each regex splits every current
// fragment into its matches and the text between them; both are kept. The regexes run on PCRE2 where it
// is built, else on the built-in engine (Note [Built-in pre-tokenizer regexes], unicode_regex.h).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace realizar {

// Default: PCRE2 when this build has it, else Builtin.
enum class RegexEngine { Default, Builtin };

class PreTokenizer {
 public:
  // Throws FormatError listing the supported names for an unknown one.
  // REALIZAR_REGEX=builtin makes Default the built-in engine too.
  static PreTokenizer for_name(const std::string& pre, RegexEngine engine = RegexEngine::Default);
  static std::vector<std::string> names();  // every supported `tokenizer.ggml.pre`
  std::vector<std::string> split(std::string_view text) const;
  bool ignore_merges() const { return ignore_merges_; }  // llama-bpe: a word that is a token stays whole
  const std::string& name() const { return name_; }

  struct Regex;  // one regex's matcher, PCRE2 or built-in (pretokenize.cpp)

  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

 private:
  PreTokenizer() = default;
  std::vector<std::unique_ptr<Regex>> regexes_;
  std::string name_;
  bool ignore_merges_ = false;
};

// Invalid UTF-8 sequences replaced by U+FFFD (the regexes need valid UTF-8).
std::string valid_utf8(std::string_view text);

}  // namespace realizar
