// SentencePiece-style encoding: the text (with a leading space when the vocabulary asks for it, spaces
// shown as U+2581) is split into UTF-8 characters, then the adjacent pair whose concatenation is the
// highest-scoring vocabulary entry is merged, repeatedly (ties: leftmost first). Characters that no
// token covers fall back to their bytes' <0xXX> tokens.
#include <queue>

#include "realizar/tokenizer.h"

namespace realizar {
namespace {

struct Symbol {
  std::size_t start, len;
  int prev, next;
};

struct Bigram {
  int left, right;
  float score;
  std::size_t len;
  bool operator<(const Bigram& o) const { return score < o.score || (score == o.score && left > o.left); }
};

std::size_t char_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

}  // namespace

void Tokenizer::encode_spm(std::string_view raw, std::vector<std::int32_t>& out) const {
  if (raw.empty()) return;
  std::string text;
  if (add_space_prefix_) text = "\xe2\x96\x81";
  for (char ch : raw) {
    if (ch == ' ') text += "\xe2\x96\x81";
    else text += ch;
  }
  std::vector<Symbol> sym;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = std::min(char_len(static_cast<unsigned char>(text[i])), text.size() - i);
    sym.push_back({i, n, static_cast<int>(sym.size()) - 1, static_cast<int>(sym.size()) + 1});
    i += n;
  }
  sym.back().next = -1;
  std::priority_queue<Bigram> queue;
  auto try_pair = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const std::size_t len = sym[l].len + sym[r].len;
    auto it = index_.find(text.substr(sym[l].start, len));
    if (it == index_.end()) return;
    queue.push({l, r, scores_[it->second], len});
  };
  for (std::size_t i = 1; i < sym.size(); ++i) try_pair(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len || l.next != b.right) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_pair(l.prev, b.left);
    try_pair(b.left, l.next);
  }
  for (int i = 0; i >= 0; i = sym[i].next) {
    const std::string piece = text.substr(sym[i].start, sym[i].len);
    auto it = index_.find(piece);
    if (it != index_.end()) {
      out.push_back(it->second);
      continue;
    }
    for (unsigned char c : piece) out.push_back(byte_token_[c]);
  }
}

}  // namespace realizar
