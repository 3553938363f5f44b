// A small backtracking regex engine over code points for the pre-tokenizer patterns (pretokenize.cpp),
// for builds without PCRE2 (WebAssembly: Debian has no PCRE2 for emscripten).
//
// Note [Built-in pre-tokenizer regexes]
// The patterns are PCRE2's with UTF + UCP, and this engine gives the same matches for the subset they
// use: literals, `\x{..}` and escaped punctuation, classes `[...]` / `[^...]` with ranges, `\s`, `\S`,
// `\p{L}`, `\p{N}`, `\p{P}` (general categories, Unicode 14.0 as in Debian's PCRE2 10.42; `\s` with UCP is
// a Z* character, tab..CR, U+0085 or U+180E), groups `(...)` / `(?:...)`, alternation (first alternative
// first), greedy `? * + {n} {n,} {n,m}` with backtracking, negative lookahead `(?!...)`, and `$` (end, or
// before a final newline). Leftmost match, as PCRE2 searches. Any other construct is an error naming it
// and its offset, never a silent difference. Tested against PCRE2 on random and real text
// (unicode_regex_test.cpp) where both are built.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace realizar {

// General categories (Unicode 14.0) of one code point.
bool unicode_letter(char32_t c);
bool unicode_number(char32_t c);
bool unicode_punctuation(char32_t c);
bool unicode_space(char32_t c);  // PCRE2's \s with UCP

class UnicodeRegex {
 public:
  // Throws trueno::Error naming an unsupported construct and its byte offset in the pattern.
  explicit UnicodeRegex(std::string_view pattern);

  // The leftmost match starting at or after `from` in the subject cps (lookahead and `$` see the subject's
  // end): [start, stop) in code points, or nothing.
  std::optional<std::pair<std::size_t, std::size_t>> find(std::span<const char32_t> cps, std::size_t from) const;

 private:
  struct Set {
    bool negated = false;
    unsigned props = 0;  // kProp* bits
    std::vector<std::pair<char32_t, char32_t>> ranges;
    bool has(char32_t c) const;
  };
  enum class Kind { Set, Group, NotAhead, End };
  struct Item {
    Kind kind;
    int index;  // into sets_ (Set) or alts_ (Group, NotAhead)
    int min = 1, max = 1;  // max -1: unbounded
  };
  using Seq = std::vector<Item>;
  using Alt = std::vector<Seq>;
  class Parser;
  class Matcher;

  std::vector<Set> sets_;
  std::vector<Alt> alts_;  // alts_[0]: the whole pattern
};

}  // namespace realizar
