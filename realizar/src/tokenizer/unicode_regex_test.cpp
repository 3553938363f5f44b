// The built-in pre-tokenizer regex engine (Note [Built-in pre-tokenizer regexes]) against PCRE2 where this
// build has it: the Unicode tables code point by code point, every pre-tokenizer's split on random text
// (seeded; the seed is printed), and the constructs it refuses.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "tokenizer/pretokenize.h"
#include "tokenizer/unicode_regex.h"
#include "trueno/error.h"

#if REALIZAR_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

namespace realizar {
namespace {

std::string utf8(char32_t c) {
  std::string s;
  if (c < 0x80) s += static_cast<char>(c);
  else if (c < 0x800) s += static_cast<char>(0xC0 | (c >> 6)), s += static_cast<char>(0x80 | (c & 0x3F));
  else if (c < 0x10000)
    s += static_cast<char>(0xE0 | (c >> 12)), s += static_cast<char>(0x80 | ((c >> 6) & 0x3F)), s += static_cast<char>(0x80 | (c & 0x3F));
  else
    s += static_cast<char>(0xF0 | (c >> 18)), s += static_cast<char>(0x80 | ((c >> 12) & 0x3F)),
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F)), s += static_cast<char>(0x80 | (c & 0x3F));
  return s;
}

std::uint64_t seed() {
  const char* e = std::getenv("REALIZAR_TEST_SEED");
  const std::uint64_t s = e ? std::strtoull(e, nullptr, 10) : std::random_device{}();
  std::printf("[unicode regex] seed %llu (rerun with REALIZAR_TEST_SEED=%llu)\n", static_cast<unsigned long long>(s),
              static_cast<unsigned long long>(s));
  return s;
}

// Text that exercises the patterns: contractions, letters and numbers of many scripts, every kind of
// space, punctuation, marks, emoji, and random code points anywhere.
std::string random_text(std::mt19937_64& rng) {
  static const char32_t pool[] = {
      'a', 'Z', 'q', '0', '7', ' ', ' ', ' ', '\n', '\r', '\t', '\v', '\f', '\'', '!', '.', ',', '$', '+', '<', '=', '^', '~', '|', '`',
      '-', '_', '(', ')', 0xE9, 0xDF, 0xB5, 0xC0, 0xB2, 0xBD, 0x663, 0x216B, 0x4E2D, 0x6587, 0xAC00, 0x3042, 0x1F600, 0x301,
      0xA0, 0x2003, 0x3000, 0x2028, 0x2029, 0x85, 0x2018, 0x201C, 0x3001, 0xFF01, 0xBF, 0xAB, 0x5D0, 0x627, 0x915, 0xE01,
      0x1D400, 0x10400, 0xFF21, 0x2102, 0x1E900, 0xFFFD};
  static const char* const pieces[] = {"'s", "'T", "'ll", "'RE", "'ve", "'M", "'d", "   ", "\r\n", "\n\n", "123456", "don't"};
  std::string s;
  const int n = static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) {
    const auto r = rng() % 10;
    if (r < 6) s += utf8(pool[rng() % (sizeof pool / sizeof pool[0])]);
    else if (r < 8) s += pieces[rng() % (sizeof pieces / sizeof pieces[0])];
    else {
      char32_t c = static_cast<char32_t>(rng() % 0x110000);
      if (c >= 0xD800 && c <= 0xDFFF) c = 'x';
      s += utf8(c);
    }
  }
  return s;
}

TEST(UnicodeRegex, RefusesWhatItDoesNotImplementByName) {
  for (const char* bad : {"a+?", "(?i:a)", "\\w+", "\\p{Lu}", "(?=a)", "a{2", "^a", ".", "[a-\\p{L}]", "(a"}) {
    try {
      UnicodeRegex re(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trueno::Error& e) {
      EXPECT_NE(std::string(e.what()).find("not supported by the built-in engine"), std::string::npos) << e.what();
    }
  }
}

TEST(UnicodeRegex, MatchesLikePcreOnSmallCases) {
  const std::u32string s = U"hello  world";
  const UnicodeRegex re(R"(\s+(?!\S)|\s+)");
  const auto m = re.find(std::span<const char32_t>(s.data(), s.size()), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first, 5u);  // the first space only: the lookahead leaves the last one for " world"
  EXPECT_EQ(m->second, 6u);
  const UnicodeRegex digits(R"(\p{N}{1,3})");
  const std::u32string d = U"x12345";
  const auto n = digits.find(std::span<const char32_t>(d.data(), d.size()), 0);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->first, 1u);
  EXPECT_EQ(n->second, 4u);
}

#if REALIZAR_HAVE_PCRE2
// The tables against PCRE2's own Unicode data, every code point outside the surrogates.
TEST(UnicodeRegex, CategoriesEqualPcre2sForEveryCodePoint) {
  struct Class {
    const char* pattern;
    bool (*ours)(char32_t);
  } classes[] = {{R"(\A\p{L}\z)", unicode_letter}, {R"(\A\p{N}\z)", unicode_number}, {R"(\A\p{P}\z)", unicode_punctuation},
                 {R"(\A\s\z)", unicode_space}};
  for (const Class& c : classes) {
    int err = 0;
    PCRE2_SIZE at = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(c.pattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
    ASSERT_NE(code, nullptr);
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
    std::size_t differ = 0;
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const std::string s = utf8(cp);
      const bool pcre = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr) >= 0;
      if (pcre != c.ours(cp) && differ++ < 5) ADD_FAILURE() << c.pattern << " U+" << std::hex << static_cast<unsigned>(cp);
    }
    EXPECT_EQ(differ, 0u) << c.pattern;
    pcre2_match_data_free(md);
    pcre2_code_free(code);
  }
}

TEST(UnicodeRegex, EveryPreTokenizerSplitsLikePcre2) {
  std::mt19937_64 rng(seed());
  for (const std::string& name : PreTokenizer::names()) {
    const auto pcre = PreTokenizer::for_name(name), builtin = PreTokenizer::for_name(name, RegexEngine::Builtin);
    for (int i = 0; i < 4000; ++i) {
      const std::string text = random_text(rng);
      ASSERT_EQ(builtin.split(text), pcre.split(text)) << name << ": text '" << text << "'";
    }
  }
}
#else
TEST(UnicodeRegex, CategoriesEqualPcre2sForEveryCodePoint) { GTEST_SKIP() << "skipped: this build has no PCRE2 to compare with"; }
TEST(UnicodeRegex, EveryPreTokenizerSplitsLikePcre2) { GTEST_SKIP() << "skipped: this build has no PCRE2 to compare with"; }
#endif

}  // namespace
}  // namespace realizar
