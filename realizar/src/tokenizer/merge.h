// What the SentencePiece and byte-level BPE encoders share: UTF-8 character lengths and the greedy
// pair-merge loop over a word's characters (best pair first, ties leftmost).
#pragma once
#include <cstddef>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

namespace realizar {

// Length of the UTF-8 sequence a lead byte starts (1 for a stray continuation or invalid byte).
inline std::size_t utf8_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

// Splits text into UTF-8 characters, then repeatedly merges the adjacent pair with the highest
// priority(left, right) (nullopt: the pair may not merge), ties to the leftmost. Returns the final
// pieces as (offset, length) in text.
template <class Priority>
std::vector<std::pair<std::size_t, std::size_t>> merge_pairs(const std::string& text, Priority priority) {
  struct Symbol {
    std::size_t start, len;
    int prev, next;
  };
  struct Pair {
    int left, right;
    float priority;
    std::size_t len;
    bool operator<(const Pair& o) const { return priority < o.priority || (priority == o.priority && left > o.left); }
  };
  std::vector<Symbol> sym;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = std::min(utf8_len(static_cast<unsigned char>(text[i])), text.size() - i);
    sym.push_back({i, n, static_cast<int>(sym.size()) - 1, static_cast<int>(sym.size()) + 1});
    i += n;
  }
  if (sym.empty()) return {};
  sym.back().next = -1;
  std::priority_queue<Pair> queue;
  auto try_pair = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const std::optional<float> p = priority(std::string_view(text).substr(sym[l].start, sym[l].len),
                                            std::string_view(text).substr(sym[r].start, sym[r].len));
    if (p) queue.push({l, r, *p, sym[l].len + sym[r].len});
  };
  for (std::size_t i = 1; i < sym.size(); ++i) try_pair(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Pair b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.next != b.right || l.len + r.len != b.len) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_pair(l.prev, b.left);
    try_pair(b.left, l.next);
  }
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  for (int i = 0; i >= 0; i = sym[i].next) pieces.emplace_back(sym[i].start, sym[i].len);
  return pieces;
}

}  // namespace realizar
