// Pre-tokenizer regexes per `tokenizer.ggml.pre`, as the common GGUF converter and engine define them,
// matched by PCRE2 where it is built, else (or with RegexEngine::Builtin) by unicode_regex.h's engine.
#include "pretokenize.h"

#if REALIZAR_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

#include "tokenizer/unicode_regex.h"

#include "realizar/gguf.h"
#include "util/strcat.h"

namespace realizar {
namespace {

const char* const kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
const char* const kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Spec {
  std::vector<std::string> regexes;
  bool ignore_merges = false;
};

const std::map<std::string, Spec>& specs() {
  static const std::map<std::string, Spec> m = [] {
    std::map<std::string, Spec> s;
    const Spec gpt2{{kGpt2}};
    for (const char* n : {"gpt-2", "gpt2", "mpt", "olmo", "gpt-neox", "phi-2", "roberta-bpe"}) s[n] = gpt2;
    s["default"] = {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}};
    for (const char* n : {"llama-bpe", "llama3", "llama-v3"}) s[n] = {{kLlama3}, true};
    s["qwen2"] = {{kQwen2}};
    s["deepseek-llm"] = {{"[\r\n]",
                          "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
                          "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+", "\\s+$", "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}+"}};
    s["deepseek-coder"] = {{"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}"}};
    s["falcon"] = {{R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}};
    for (const char* n : {"starcoder", "refact", "command-r", "smollm", "codeshell"}) s[n] = {{R"(\p{N})", kGpt2}};
    return s;
  }();
  return m;
}

// The valid UTF-8 sequence at s[i]: its length (0 when invalid) and, when cp is given, its code point.
std::size_t utf8_seq_len(std::string_view s, std::size_t i, char32_t* cp_out = nullptr) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  std::uint32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  const std::uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp_out) *cp_out = cp;
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_seq_len(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// One regex of a pre-tokenizer: appends the pieces of text[off, off + len) (its matches and the text
// between them) to out, as (offset, length).
struct PreTokenizer::Regex {
  virtual ~Regex() = default;
  virtual void split(const std::string& text, std::size_t off, std::size_t len, std::vector<std::pair<std::size_t, std::size_t>>& out) const = 0;
};

namespace {

using Pieces = std::vector<std::pair<std::size_t, std::size_t>>;

// Adds the match [ms, me) found from pos, and the text before it; returns where the next search starts.
std::size_t take(const std::string& text, std::size_t pos, std::size_t ms, std::size_t me, Pieces& out) {
  if (me == ms) return ms + std::max<std::size_t>(1, utf8_seq_len(text, ms));  // empty match: step one character
  if (ms > pos) out.emplace_back(pos, ms - pos);
  out.emplace_back(ms, me - ms);
  return me;
}

#if REALIZAR_HAVE_PCRE2
class Pcre2Regex final : public PreTokenizer::Regex {
 public:
  Pcre2Regex(const std::string& pre, const std::string& src) {
    int err = 0;
    PCRE2_SIZE at = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(src.data()), src.size(), PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
    if (code_ == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw trueno::Error(strcat("pre-tokenizer '", pre, "': regex does not compile at ", at, ": ", reinterpret_cast<char*>(msg)));
    }
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // optional speed-up; matching works without it
    match_ = pcre2_match_data_create_from_pattern(code_, nullptr);
  }
  ~Pcre2Regex() override {
    if (match_) pcre2_match_data_free(match_);
    if (code_) pcre2_code_free(code_);
  }
  void split(const std::string& text, std::size_t off, std::size_t len, Pieces& out) const override {
    std::size_t pos = off;
    const std::size_t end = off + len;
    while (pos < end) {
      const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data() + off), len, pos - off, PCRE2_NO_UTF_CHECK, match_, nullptr);
      if (rc < 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match_);
      pos = take(text, pos, off + ov[0], off + ov[1], out);
    }
    if (pos < end) out.emplace_back(pos, end - pos);
  }

 private:
  pcre2_code* code_ = nullptr;
  pcre2_match_data* match_ = nullptr;
};
#endif

class BuiltinRegex final : public PreTokenizer::Regex {
 public:
  explicit BuiltinRegex(const std::string& src) : re_(src) {}
  void split(const std::string& text, std::size_t off, std::size_t len, Pieces& out) const override {
    std::vector<char32_t> cps;
    std::vector<std::size_t> at;  // byte offset of each code point, and of the end
    for (std::size_t i = off; i < off + len;) {
      char32_t cp = 0;
      const std::size_t n = utf8_seq_len(text, i, &cp);  // text is valid UTF-8 (valid_utf8): n >= 1
      cps.push_back(cp), at.push_back(i);
      i += n;
    }
    at.push_back(off + len);
    std::size_t pos = off, cpos = 0;
    const std::size_t end = off + len;
    while (pos < end) {
      const auto m = re_.find(cps, cpos);
      if (!m) break;
      pos = take(text, pos, at[m->first], at[m->second], out);
      cpos = static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), pos) - at.begin());
    }
    if (pos < end) out.emplace_back(pos, end - pos);
  }

 private:
  UnicodeRegex re_;
};

}  // namespace

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

std::vector<std::string> PreTokenizer::names() {
  std::vector<std::string> n;
  for (const auto& [name, spec] : specs()) n.push_back(name);
  return n;
}

PreTokenizer PreTokenizer::for_name(const std::string& pre, RegexEngine engine) {
  const auto& all = specs();
  auto it = all.find(pre);
  if (it == all.end()) {
    std::string names;
    for (const auto& [n, s] : all) names += (names.empty() ? "" : ", ") + n;
    throw FormatError(strcat("tokenizer.ggml.pre '", pre, "' is not supported; supported: ", names));
  }
  PreTokenizer p;
  p.name_ = pre;
  p.ignore_merges_ = it->second.ignore_merges;
#if REALIZAR_HAVE_PCRE2
  const char* env = std::getenv("REALIZAR_REGEX");  // "builtin": the built-in engine everywhere (its tests)
  const bool builtin = engine == RegexEngine::Builtin || (env != nullptr && std::string_view(env) == "builtin");
#else
  const bool builtin = true;
  (void)engine;
#endif
  for (const auto& src : it->second.regexes) {
#if REALIZAR_HAVE_PCRE2
    if (!builtin) {
      p.regexes_.push_back(std::make_unique<Pcre2Regex>(pre, src));
      continue;
    }
#endif
    p.regexes_.push_back(std::make_unique<BuiltinRegex>(src));
  }
  (void)builtin;
  return p;
}

std::vector<std::string> PreTokenizer::split(std::string_view raw) const {
  const std::string text = valid_utf8(raw);
  std::vector<std::pair<std::size_t, std::size_t>> parts{{0, text.size()}};  // (offset, length)
  if (text.empty()) return {};
  for (const auto& r : regexes_) {
    std::vector<std::pair<std::size_t, std::size_t>> next;
    for (auto [off, len] : parts) r->split(text, off, len, next);
    parts.swap(next);
  }
  std::vector<std::string> words;
  words.reserve(parts.size());
  for (auto [off, len] : parts) words.emplace_back(text.substr(off, len));
  return words;
}

}  // namespace realizar
