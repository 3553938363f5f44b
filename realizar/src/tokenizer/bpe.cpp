// Byte-level BPE: per pre-tokenized word, bytes -> characters, then repeatedly merge the adjacent pair
// with the lowest merge rank (ties: leftmost); symbols missing from the vocabulary fall back to their
// bytes' tokens.
#include <array>
#include <queue>

#include "realizar/tokenizer.h"
#include "tokenizer/bpe_bytes.h"
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

std::size_t char_len(unsigned char c) {
  return c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
}

struct Symbol {
  std::size_t start, len;
  int prev, next;
};

struct Bigram {
  int left, right, rank;
  std::size_t len;
  bool operator<(const Bigram& o) const { return rank > o.rank || (rank == o.rank && left > o.left); }
};

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
    const std::size_t n = std::min(char_len(static_cast<unsigned char>(token[i])), token.size() - i);
    auto it = byte_map().to_byte.find(std::string(token.substr(i, n)));
    if (it != byte_map().to_byte.end()) out += static_cast<char>(it->second);
    else out.append(token.substr(i, n));
    i += n;
  }
  return out;
}

void Tokenizer::encode_bpe(std::string_view raw, std::vector<std::int32_t>& out) const {
  for (const std::string& word_bytes : pre_->split(raw)) {
    const std::string word = bpe_encode_bytes(word_bytes);
    if (pre_->ignore_merges()) {
      auto it = index_.find(word);
      if (it != index_.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    std::vector<Symbol> sym;
    for (std::size_t i = 0; i < word.size();) {
      const std::size_t n = std::min(char_len(static_cast<unsigned char>(word[i])), word.size() - i);
      sym.push_back({i, n, static_cast<int>(sym.size()) - 1, static_cast<int>(sym.size()) + 1});
      i += n;
    }
    if (sym.empty()) continue;
    sym.back().next = -1;
    std::priority_queue<Bigram> queue;
    auto try_pair = [&](int l, int r) {
      if (l < 0 || r < 0) return;
      std::string key = word.substr(sym[l].start, sym[l].len);
      key += ' ';
      key.append(word, sym[r].start, sym[r].len);
      auto it = merge_rank_.find(key);
      if (it != merge_rank_.end()) queue.push({l, r, it->second, sym[l].len + sym[r].len});
    };
    for (std::size_t i = 1; i < sym.size(); ++i) try_pair(static_cast<int>(i) - 1, static_cast<int>(i));
    while (!queue.empty()) {
      const Bigram b = queue.top();
      queue.pop();
      Symbol& l = sym[b.left];
      Symbol& r = sym[b.right];
      if (l.len == 0 || r.len == 0 || l.next != b.right || l.len + r.len != b.len) continue;
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (r.next >= 0) sym[r.next].prev = b.left;
      try_pair(l.prev, b.left);
      try_pair(b.left, l.next);
    }
    for (int i = 0; i >= 0; i = sym[i].next) {
      const std::string piece = word.substr(sym[i].start, sym[i].len);
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
