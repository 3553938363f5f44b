// Vocabulary loading, special tokens, pieces and UTF-8 streaming; the SentencePiece merge is in spm.cpp.
#include <algorithm>
#include <cstdio>

#include "realizar/tokenizer.h"
#include "tokenizer/bpe_bytes.h"
#include "tokenizer/merge.h"
#include "tokenizer/pretokenize.h"
#include "util/strcat.h"

namespace realizar {
namespace {

const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's visible space

std::int32_t optional_id(const gguf::File& f, const char* key, std::size_t n) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return -1;
  const std::uint64_t id = v->as_uint(key);
  if (id == 0xffffffffu) return -1;  // "none" in files written by the common converter
  if (id >= n) throw FormatError(strcat(f.path(), ": ", key, " = ", id, " is outside the vocabulary of ", n, " tokens"));
  return static_cast<std::int32_t>(id);
}

bool get_bool(const gguf::File& f, const char* key, bool fallback) {
  const gguf::Value* v = f.find(key);
  return v == nullptr ? fallback : v->as_uint(key) != 0;
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::string Tokenizer::token_text(std::int32_t id) const {
  return id >= 0 && static_cast<std::size_t>(id) < tokens_.size() ? tokens_[static_cast<std::size_t>(id)] : std::string();
}

Tokenizer Tokenizer::from_gguf(const gguf::File& f) {
  Tokenizer t;
  t.model_ = f.get_string("tokenizer.ggml.model");
  if (t.model_ != "llama" && t.model_ != "gpt2")
    throw FormatError(strcat(f.path(), ": tokenizer model '", t.model_, "' is not supported; supported: llama (SentencePiece), gpt2 (byte-level BPE)"));
  const bool bpe = t.model_ == "gpt2";
  const gguf::Value& toks = f.at("tokenizer.ggml.tokens");
  if (toks.type != gguf::ValueType::Array || toks.elem != gguf::ValueType::String)
    throw FormatError(strcat(f.path(), ": tokenizer.ggml.tokens must be an array of strings"));
  const std::size_t n = toks.array.size();
  t.tokens_.reserve(n);
  for (const auto& v : toks.array) t.tokens_.push_back(v.s);
  t.scores_.assign(n, 0.0f);
  if (const gguf::Value* s = f.find("tokenizer.ggml.scores")) {
    if (s->type != gguf::ValueType::Array || s->array.size() != n)
      throw FormatError(strcat(f.path(), ": tokenizer.ggml.scores must hold ", n, " numbers"));
    for (std::size_t i = 0; i < n; ++i) t.scores_[i] = static_cast<float>(s->array[i].as_float("tokenizer.ggml.scores"));
  }
  t.types_.assign(n, TokenType::Normal);
  if (const gguf::Value* s = f.find("tokenizer.ggml.token_type")) {
    if (s->type != gguf::ValueType::Array || s->array.size() != n)
      throw FormatError(strcat(f.path(), ": tokenizer.ggml.token_type must hold ", n, " integers"));
    for (std::size_t i = 0; i < n; ++i) {
      const auto ty = s->array[i].as_int("tokenizer.ggml.token_type");
      if (ty < 0 || ty > 6) throw FormatError(strcat(f.path(), ": token ", i, " has unknown type ", ty));
      t.types_[i] = static_cast<TokenType>(ty);
    }
  }
  for (std::size_t i = 0; i < n; ++i) t.index_.emplace(t.tokens_[i], static_cast<std::int32_t>(i));
  t.bos_ = optional_id(f, "tokenizer.ggml.bos_token_id", n);
  t.eos_ = optional_id(f, "tokenizer.ggml.eos_token_id", n);
  t.unk_ = optional_id(f, "tokenizer.ggml.unknown_token_id", n);
  t.eot_ = optional_id(f, "tokenizer.ggml.eot_token_id", n);
  t.add_bos_ = get_bool(f, "tokenizer.ggml.add_bos_token", !bpe);
  t.add_eos_ = get_bool(f, "tokenizer.ggml.add_eos_token", false);
  t.add_space_prefix_ = get_bool(f, "tokenizer.ggml.add_space_prefix", !bpe);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = t.index_.find(bpe ? bpe_byte_char(static_cast<unsigned char>(b)) : std::string(name));
    t.byte_token_[b] = it == t.index_.end() ? t.unk_ : it->second;
  }
  if (bpe) {
    const gguf::Value& merges = f.at("tokenizer.ggml.merges");
    if (merges.type != gguf::ValueType::Array || merges.elem != gguf::ValueType::String)
      throw FormatError(strcat(f.path(), ": tokenizer.ggml.merges must be an array of strings"));
    t.merge_rank_.reserve(merges.array.size());
    for (std::size_t i = 0; i < merges.array.size(); ++i) t.merge_rank_.emplace(merges.array[i].s, static_cast<std::int32_t>(i));
    try {
      t.pre_ = std::make_unique<PreTokenizer>(PreTokenizer::for_name(f.get_string("tokenizer.ggml.pre", "default")));
    } catch (const FormatError& e) {
      throw FormatError(strcat(f.path(), ": ", e.what()));
    }
  }
  t.specials_by_byte_.resize(256);
  for (std::size_t i = 0; i < n; ++i)
    if ((t.types_[i] == TokenType::Control || t.types_[i] == TokenType::UserDefined) && !t.tokens_[i].empty())
      t.specials_by_byte_[static_cast<unsigned char>(t.tokens_[i][0])].push_back(static_cast<std::int32_t>(i));
  for (auto& bucket : t.specials_by_byte_)  // longest first: "<|a|>x" wins over "<|a|>"
    std::stable_sort(bucket.begin(), bucket.end(),
                     [&](std::int32_t a, std::int32_t b) { return t.tokens_[a].size() > t.tokens_[b].size(); });
  return t;
}

// User-defined tokens are always matched in the text (they are part of the vocabulary's spelling, e.g.
// DeepSeek's single-character additions); control tokens only when parse_special asks for it.
std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<std::int32_t> out;
  if (add_bos && add_bos_ && bos_ >= 0) out.push_back(bos_);
  std::size_t start = 0, i = 0;
  while (i < text.size()) {
    std::int32_t hit = -1;
    for (std::int32_t s : specials_by_byte_[static_cast<unsigned char>(text[i])])
      if ((parse_special || types_[s] == TokenType::UserDefined) && text.compare(i, tokens_[s].size(), tokens_[s]) == 0) {
        hit = s;
        break;
      }
    if (hit < 0) {
      ++i;
      continue;
    }
    if (i > start) encode_plain(text.substr(start, i - start), out);
    out.push_back(hit);
    i += tokens_[hit].size();
    start = i;
  }
  if (start < text.size()) encode_plain(text.substr(start), out);
  if (add_bos && add_eos_ && eos_ >= 0) out.push_back(eos_);  // the same switch adds both specials
  return out;
}

std::string Tokenizer::piece(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size())
    throw trueno::InvalidArgument(strcat("token id ", id, " is outside the vocabulary of ", tokens_.size()));
  const std::string& s = tokens_[id];
  switch (types_[id]) {
    case TokenType::Control: case TokenType::Unused: return "";
    case TokenType::Byte: {
      unsigned v = 0;
      if (s.size() == 6 && std::sscanf(s.c_str(), "<0x%02X>", &v) == 1) return std::string(1, static_cast<char>(v));
      return s;
    }
    case TokenType::UserDefined: return s;
    default: {
      if (pre_) return bpe_decode(s);
      std::string r;
      for (std::size_t i = 0; i < s.size();) {
        if (s.compare(i, kSpace.size(), kSpace) == 0) r += ' ', i += kSpace.size();
        else r += s[i++];
      }
      return r;
    }
  }
}

std::string Tokenizer::decode(const std::vector<std::int32_t>& ids) const {
  std::string r;
  for (auto id : ids) r += piece(id);
  return r;
}

bool Tokenizer::is_end_of_generation(std::int32_t id) const { return id == eos_ || (eot_ >= 0 && id == eot_); }

std::string Tokenizer::describe() const {
  return strcat("tokenizer: ", model_ == "llama" ? "SentencePiece (llama)" : "byte-level BPE (gpt2), pre-tokenizer ",
                pre_ ? pre_->name() : "", ", ", tokens_.size(), " tokens, BOS ", bos_,
                ", EOS ", eos_, add_bos_ ? ", adds BOS" : "", add_space_prefix_ ? ", space prefix" : "", "\n");
}

std::string Utf8Stream::push(std::string_view bytes) {
  pending_ += bytes;
  std::size_t complete = 0;
  while (complete < pending_.size()) {
    const std::size_t n = utf8_len(static_cast<unsigned char>(pending_[complete]));
    if (complete + n > pending_.size()) break;
    complete += n;
  }
  std::string out = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return out;
}

std::string Utf8Stream::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace realizar
