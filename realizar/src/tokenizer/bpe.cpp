// Byte-level BPE: per pre-tokenized word, bytes -> characters, then repeatedly merge the adjacent pair
// with the lowest merge rank (ties: leftmost); symbols missing from the vocabulary fall back to their
// bytes' tokens.
#include <array>

#include "realizar/tokenizer.h"
#include "tokenizer/bpe_bytes.h"
#include "tokenizer/merge.h"
#include "tokenizer/pretokenize.h"

namespace realizar {
namespace {

std::string utf8(std::uint32_t cp) {
  std::string s;
  if (cp < 0x80) s += static_cast<char>(cp);
  else if (cp < 0x800) s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
  else s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), s += static_cast<char>(0x80 | (cp & 0x3F));
  return s;
}

struct ByteMap {
  std::array<std::string, 256> to_char;
  std::unordered_map<std::string, unsigned char> to_byte;
  ByteMap() {
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool self = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      to_char[b] = utf8(self ? static_cast<std::uint32_t>(b) : static_cast<std::uint32_t>(next++));
      to_byte[to_char[b]] = static_cast<unsigned char>(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

}  // namespace

std::string bpe_byte_char(unsigned char b) { return byte_map().to_char[b]; }

std::string bpe_encode_bytes(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += byte_map().to_char[c];
  return out;
}

std::string bpe_decode(std::string_view token) {
  std::string out;
  for (std::size_t i = 0; i < token.size();) {
    const std::size_t n = std::min(utf8_len(static_cast<unsigned char>(token[i])), token.size() - i);
    auto it = byte_map().to_byte.find(std::string(token.substr(i, n)));
    if (it != byte_map().to_byte.end()) out += static_cast<char>(it->second);
    else out.append(token.substr(i, n));
    i += n;
  }
  return out;
}

void Tokenizer::encode_bpe(std::string_view raw, std::vector<std::int32_t>& out) const {
  std::string key;
  for (const std::string& word_bytes : pre_->split(raw)) {
    const std::string word = bpe_encode_bytes(word_bytes);
    if (pre_->ignore_merges()) {
      auto it = index_.find(word);
      if (it != index_.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    // Lower merge rank = earlier merge: priority -rank.
    const auto pieces = merge_pairs(word, [&](std::string_view l, std::string_view r) -> std::optional<float> {
      key.assign(l).append(1, ' ').append(r);
      auto it = merge_rank_.find(key);
      if (it == merge_rank_.end()) return std::nullopt;
      return -static_cast<float>(it->second);
    });
    for (auto [start, len] : pieces) {
      const std::string piece = word.substr(start, len);
      auto it = index_.find(piece);
      if (it != index_.end()) {
        out.push_back(it->second);
        continue;
      }
      for (unsigned char c : bpe_decode(piece)) out.push_back(byte_token_[c]);
    }
  }
}

}  // namespace realizar
