// Tokenizers built from a GGUF vocabulary: SentencePiece-style (`tokenizer.ggml.model` = "llama":
// scored merges of UTF-8 characters, byte fallback, space prefix) and byte-level BPE ("gpt2": ranked
// merges over bytes mapped to printable characters, words from the pre-tokenizer named by
// `tokenizer.ggml.pre`).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <memory>
#include <unordered_map>
#include <vector>

#include "realizar/gguf.h"

namespace realizar {

enum class TokenType : std::int32_t { Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

class PreTokenizer;

class Tokenizer {
 public:
  Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  static Tokenizer from_gguf(const gguf::File& f);

  // Token ids of text. add_bos: add the specials the vocabulary asks for: BOS first
  // (tokenizer.ggml.add_bos_token, default on for SentencePiece), EOS last (add_eos_token, default off). User-defined tokens' text always becomes them; parse_special: so does
  // control tokens' text (e.g. </s>).
  std::vector<std::int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;
  // The bytes a token stands for when printed (control tokens print nothing).
  std::string piece(std::int32_t id) const;
  std::string decode(const std::vector<std::int32_t>& ids) const;
  // The vocabulary's text of a token as stored (control tokens too, e.g. "<s>"); "" outside it.
  std::string token_text(std::int32_t id) const;

  std::size_t size() const { return tokens_.size(); }
  std::int32_t bos() const { return bos_; }
  std::int32_t eos() const { return eos_; }
  bool is_end_of_generation(std::int32_t id) const;
  std::string describe() const;

 private:
  std::string model_;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::unordered_map<std::string, std::int32_t> index_;
  std::int32_t bos_ = -1, eos_ = -1, unk_ = -1, eot_ = -1;
  bool add_bos_ = true, add_eos_ = false, add_space_prefix_ = true;
  std::int32_t byte_token_[256] = {};
  std::vector<std::vector<std::int32_t>> specials_by_byte_;  // control + user-defined by first byte, longest first

  // Byte-level BPE
  std::unordered_map<std::string, std::int32_t> merge_rank_;  // "left right" -> rank
  std::unique_ptr<PreTokenizer> pre_;

  void encode_spm(std::string_view text, std::vector<std::int32_t>& out) const;
  void encode_bpe(std::string_view text, std::vector<std::int32_t>& out) const;
  void encode_plain(std::string_view text, std::vector<std::int32_t>& out) const {
    if (pre_) encode_bpe(text, out);
    else encode_spm(text, out);
  }
};

// Turns a stream of token pieces into text that is always whole UTF-8: bytes of a character split
// across tokens are held until the character is complete.
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  std::string flush();  // whatever is left (an incomplete sequence at the end of generation)

 private:
  std::string pending_;
};

}  // namespace realizar
