// The built-in pre-tokenizer regex engine (Note [Built-in pre-tokenizer regexes], unicode_regex.h).
#include "tokenizer/unicode_regex.h"

#include <algorithm>

#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar {
namespace {

struct CodeRange {
  char32_t lo, hi;
};
#include "unicode_categories.inc"

template <std::size_t N>
bool in(const CodeRange (&table)[N], char32_t c) {
  const auto it = std::upper_bound(std::begin(table), std::end(table), c, [](char32_t v, const CodeRange& r) { return v < r.lo; });
  return it != std::begin(table) && c <= (it - 1)->hi;
}

constexpr unsigned kPropLetter = 1, kPropNumber = 2, kPropPunct = 4, kPropSpace = 8, kPropNotSpace = 16;

bool has_props(unsigned props, char32_t c) {
  return ((props & kPropLetter) && unicode_letter(c)) || ((props & kPropNumber) && unicode_number(c)) ||
         ((props & kPropPunct) && unicode_punctuation(c)) || ((props & kPropSpace) && unicode_space(c)) ||
         ((props & kPropNotSpace) && !unicode_space(c));
}

// A continuation: "does the rest of the pattern match from here?" (a reference to a callable, no allocation).
class Cont {
 public:
  template <class F>
  Cont(const F& f) : obj_(&f), fn_([](const void* o, std::size_t p) { return (*static_cast<const F*>(o))(p); }) {}
  bool operator()(std::size_t p) const { return fn_(obj_, p); }

 private:
  const void* obj_;
  bool (*fn_)(const void*, std::size_t);
};

}  // namespace

bool unicode_letter(char32_t c) { return in(kLetter, c); }
bool unicode_number(char32_t c) { return in(kNumber, c); }
bool unicode_punctuation(char32_t c) { return in(kPunctuation, c); }
// PCRE2: Z* or its \h / \v lists, which add U+0085 (NEL) and U+180E (Mongolian vowel separator, Cf since
// Unicode 6.3) to the separators and tab..CR.
bool unicode_space(char32_t c) { return (c >= 9 && c <= 13) || c == 0x85 || c == 0x180E || in(kSeparator, c); }

bool UnicodeRegex::Set::has(char32_t c) const {
  bool hit = has_props(props, c);
  for (std::size_t i = 0; !hit && i < ranges.size(); ++i) hit = c >= ranges[i].first && c <= ranges[i].second;
  return hit != negated;
}

class UnicodeRegex::Parser {
 public:
  Parser(UnicodeRegex& re, std::string_view p) : re_(re), p_(p) {}

  void parse() {
    re_.alts_.emplace_back();
    parse_alt(0);
    if (at_ != p_.size()) fail("an unmatched ')'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw trueno::Error(strcat("pre-tokenizer regex: ", what, " at offset ", at_, " of '", p_, "' is not supported by the built-in engine"));
  }
  bool more() const { return at_ < p_.size(); }
  char peek() const { return p_[at_]; }

  char32_t utf8() {  // the pattern's next character (patterns may hold UTF-8 literals)
    const auto c = static_cast<unsigned char>(p_[at_++]);
    if (c < 0x80) return c;
    const int n = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : 3;
    char32_t cp = c & (0x3F >> n);
    for (int k = 0; k < n && more(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(p_[at_++]) & 0x3F);
    return cp;
  }

  std::size_t number() {
    if (!more() || peek() < '0' || peek() > '9') fail("a quantifier without a number");
    std::size_t n = 0;
    while (more() && peek() >= '0' && peek() <= '9') n = n * 10 + static_cast<std::size_t>(p_[at_++] - '0');
    return n;
  }

  void parse_alt(int index) {
    re_.alts_[static_cast<std::size_t>(index)].emplace_back();
    while (more() && peek() != ')') {
      if (peek() == '|') {
        ++at_;
        re_.alts_[static_cast<std::size_t>(index)].emplace_back();
        continue;
      }
      Item item = atom();
      quantifier(item);
      re_.alts_[static_cast<std::size_t>(index)].back().push_back(item);
    }
  }

  int new_set(Set s) {
    re_.sets_.push_back(std::move(s));
    return static_cast<int>(re_.sets_.size()) - 1;
  }

  Item atom() {
    const char c = peek();
    if (c == '(') {
      ++at_;
      Kind kind = Kind::Group;
      if (more() && peek() == '?') {
        ++at_;
        if (more() && peek() == ':') ++at_;
        else if (more() && peek() == '!') ++at_, kind = Kind::NotAhead;
        else fail("a group kind other than (?: and (?!");
      }
      const int index = static_cast<int>(re_.alts_.size());
      re_.alts_.emplace_back();
      parse_alt(index);
      if (!more() || peek() != ')') fail("a missing ')'");
      ++at_;
      return {kind, index};
    }
    if (c == '[') return {Kind::Set, new_set(bracket())};
    if (c == '$') return ++at_, Item{Kind::End, 0};
    if (c == '.' || c == '^' || c == '*' || c == '+' || c == '?' || c == '{') fail(strcat("'", c, "'"));
    Set s;
    if (c == '\\') {
      ++at_;
      escape(s);
    } else {
      const char32_t cp = utf8();
      s.ranges.emplace_back(cp, cp);
    }
    return {Kind::Set, new_set(std::move(s))};
  }

  // After a backslash: adds what it denotes to s (a character, a range of one, or a property).
  void escape(Set& s) {
    if (!more()) fail("a trailing backslash");
    const char e = p_[at_++];
    const auto one = [&](char32_t cp) { s.ranges.emplace_back(cp, cp); };
    switch (e) {
      case 's': s.props |= kPropSpace; return;
      case 'S': s.props |= kPropNotSpace; return;
      case 'r': return one('\r');
      case 'n': return one('\n');
      case 't': return one('\t');
      case 'p': {
        if (!more() || peek() != '{') fail("\\p without {");
        const std::size_t close = p_.find('}', at_);
        if (close == std::string_view::npos) fail("\\p{ without }");
        const std::string_view name = p_.substr(at_ + 1, close - at_ - 1);
        s.props |= name == "L" ? kPropLetter : name == "N" ? kPropNumber : name == "P" ? kPropPunct : 0u;
        if (name != "L" && name != "N" && name != "P") fail(strcat("\\p{", name, "}"));
        at_ = close + 1;
        return;
      }
      case 'x': {  // \xHH or \x{H...}
        const bool braced = more() && peek() == '{';
        if (braced) ++at_;
        char32_t cp = 0;
        std::size_t n = 0;
        while (more() && (braced ? peek() != '}' : n < 2)) {
          const char h = p_[at_++];
          const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (v < 0 || ++n > 6) fail("a bad \\x escape");
          cp = cp * 16 + static_cast<char32_t>(v);
        }
        if (n == 0 || (braced && !more())) fail("a bad \\x escape");
        if (braced) ++at_;
        return one(cp);
      }
      default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9')) fail(strcat("\\", e));
        return one(static_cast<unsigned char>(e));  // escaped punctuation: itself
    }
  }

  // [...] after the '[': characters, ranges a-b, escapes; a leading ^ negates.
  Set bracket() {
    ++at_;
    Set s;
    if (more() && peek() == '^') s.negated = true, ++at_;
    bool first = true;
    while (more() && (peek() != ']' || first)) {
      first = false;
      Set piece;
      if (peek() == '\\') {
        ++at_;
        escape(piece);
      } else {
        const char32_t cp = utf8();
        piece.ranges.emplace_back(cp, cp);
      }
      if (piece.props == 0 && more() && peek() == '-' && at_ + 1 < p_.size() && p_[at_ + 1] != ']') {  // a range lo-hi
        ++at_;
        Set hi;
        if (peek() == '\\') {
          ++at_;
          escape(hi);
        } else {
          const char32_t cp = utf8();
          hi.ranges.emplace_back(cp, cp);
        }
        if (hi.props != 0) fail("a range ending in a property");
        s.ranges.emplace_back(piece.ranges[0].first, hi.ranges[0].first);
        continue;
      }
      s.props |= piece.props;
      s.ranges.insert(s.ranges.end(), piece.ranges.begin(), piece.ranges.end());
    }
    if (!more()) fail("a missing ']'");
    ++at_;
    return s;
  }

  void quantifier(Item& item) {
    if (!more()) return;
    const char c = peek();
    if (c == '?') item.min = 0, item.max = 1;
    else if (c == '*') item.min = 0, item.max = -1;
    else if (c == '+') item.min = 1, item.max = -1;
    else if (c == '{') {
      ++at_;
      item.min = static_cast<int>(number());
      item.max = item.min;
      if (more() && peek() == ',') {
        ++at_;
        item.max = more() && peek() == '}' ? -1 : static_cast<int>(number());
      }
      if (!more() || peek() != '}') fail("a quantifier without '}'");
    } else {
      return;
    }
    ++at_;
    if (item.kind == Kind::NotAhead || item.kind == Kind::End) fail("a quantified assertion");
    if (more() && (peek() == '?' || peek() == '+')) fail("a lazy or possessive quantifier");
  }

  UnicodeRegex& re_;
  std::string_view p_;
  std::size_t at_ = 0;
};

UnicodeRegex::UnicodeRegex(std::string_view pattern) { Parser(*this, pattern).parse(); }

class UnicodeRegex::Matcher {
 public:
  Matcher(const UnicodeRegex& re, std::span<const char32_t> s) : re_(re), s_(s) {}

  bool alt(int index, std::size_t pos, Cont k) const {
    for (const Seq& seq : re_.alts_[static_cast<std::size_t>(index)])
      if (items(seq, 0, pos, k)) return true;
    return false;
  }

 private:
  bool items(const Seq& seq, std::size_t i, std::size_t pos, Cont k) const {
    if (i == seq.size()) return k(pos);
    const Item& it = seq[i];
    const auto rest = [&](std::size_t p) { return items(seq, i + 1, p, k); };
    switch (it.kind) {
      case Kind::End:
        return (pos == s_.size() || (pos + 1 == s_.size() && s_[pos] == '\n')) && rest(pos);
      case Kind::NotAhead: {
        const auto any = [](std::size_t) { return true; };
        return !alt(it.index, pos, any) && rest(pos);
      }
      case Kind::Set: {  // greedy: the longest run first, then shorter
        const Set& set = re_.sets_[static_cast<std::size_t>(it.index)];
        const std::size_t cap = it.max < 0 ? s_.size() - pos : std::min<std::size_t>(static_cast<std::size_t>(it.max), s_.size() - pos);
        std::size_t n = 0;
        while (n < cap && set.has(s_[pos + n])) ++n;
        for (std::size_t c = n + 1; c-- > static_cast<std::size_t>(it.min);)
          if (rest(pos + c)) return true;
        return false;
      }
      case Kind::Group:
        return repeat(it, 0, pos, rest);
    }
    return false;
  }

  // it's group matched `count` times so far, ending at pos: one more (greedy), else the rest.
  bool repeat(const Item& it, int count, std::size_t pos, Cont rest) const {
    if (it.max < 0 || count < it.max) {
      const auto again = [&](std::size_t p) { return p != pos && repeat(it, count + 1, p, rest); };  // no empty loops
      if (alt(it.index, pos, again)) return true;
    }
    return count >= it.min && rest(pos);
  }

  const UnicodeRegex& re_;
  std::span<const char32_t> s_;
};

std::optional<std::pair<std::size_t, std::size_t>> UnicodeRegex::find(std::span<const char32_t> cps, std::size_t from) const {
  const Matcher m(*this, cps);
  for (std::size_t start = from; start <= cps.size(); ++start) {
    std::size_t stop = 0;
    const auto done = [&](std::size_t p) { return stop = p, true; };
    if (m.alt(0, start, done)) return std::make_pair(start, stop);
  }
  return std::nullopt;
}

}  // namespace realizar
