// SentencePiece-style encoding: the text (with a leading space when the vocabulary asks for it, spaces
// shown as U+2581) is split into UTF-8 characters, then the adjacent pair whose concatenation is the
// highest-scoring vocabulary entry is merged, repeatedly (ties: leftmost first). Characters that no
// token covers fall back to their bytes' <0xXX> tokens.
#include "realizar/tokenizer.h"
#include "tokenizer/merge.h"

namespace realizar {

void Tokenizer::encode_spm(std::string_view raw, std::vector<std::int32_t>& out) const {
  if (raw.empty()) return;
  std::string text;
  if (add_space_prefix_) text = "\xe2\x96\x81";
  for (char ch : raw) {
    if (ch == ' ') text += "\xe2\x96\x81";
    else text += ch;
  }
  std::string joined;
  const auto pieces = merge_pairs(text, [&](std::string_view l, std::string_view r) -> std::optional<float> {
    joined.assign(l).append(r);
    auto it = index_.find(joined);
    if (it == index_.end()) return std::nullopt;
    return scores_[it->second];
  });
  for (auto [start, len] : pieces) {
    auto it = index_.find(text.substr(start, len));
    if (it != index_.end()) {
      out.push_back(it->second);
      continue;
    }
    for (std::size_t i = start; i < start + len; ++i) out.push_back(byte_token_[static_cast<unsigned char>(text[i])]);
  }
}

}  // namespace realizar
