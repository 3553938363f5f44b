// Tokenizers against the real vocabularies in tests/data/vocab: every .inp string must give
// exactly the .out ids (no BOS/EOS, no special parsing): SentencePiece (llama-spm, phi-3) and
// byte-level BPE (gpt-2, deepseek-llm with its own pre-tokenizer).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "realizar/tokenizer.h"
#include "tokenizer/pretokenize.h"
#include "support/testdata.h"

namespace realizar {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

class VocabTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabTest, MatchesEveryExpectedTokenization) {
  const std::string base = test::testdata_dir() + "/vocab/ggml-vocab-" + GetParam() + ".gguf";
  const auto file = gguf::File::open(base);
  const auto tok = Tokenizer::from_gguf(file);
  const std::string inp = slurp(base + ".inp"), out = slurp(base + ".out");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts, expected;
  for (std::size_t at = 0, next; (next = inp.find(sep, at)) != std::string::npos; at = next + sep.size())
    texts.push_back(inp.substr(at, next - at));
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) expected.push_back(line);
  ASSERT_EQ(texts.size(), expected.size());
  ASSERT_GT(texts.size(), 20u);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::string got;
    for (auto id : tok.encode(texts[i], false)) got.append(" ").append(std::to_string(id));
    EXPECT_EQ(got, expected[i]) << "string #" << i << ": '" << texts[i] << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Real, VocabTest, ::testing::Values("llama-spm", "phi-3", "gpt-2", "deepseek-llm"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Tokenizer, SpecialTextAndBosRules) {
  const auto file = gguf::File::open(test::testdata_dir() + "/vocab/ggml-vocab-llama-spm.gguf");
  const auto tok = Tokenizer::from_gguf(file);
  const auto plain = tok.encode("a</s>", true, false);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain.front(), tok.bos());
  EXPECT_EQ(std::count(plain.begin(), plain.end(), tok.eos()), 0);
  const auto special = tok.encode("a</s>", false, true);
  EXPECT_EQ(special.back(), tok.eos());
}

TEST(Tokenizer, DecodeRoundTripsAndStreamsWholeCharacters) {
  const auto file = gguf::File::open(test::testdata_dir() + "/vocab/ggml-vocab-llama-spm.gguf");
  const auto tok = Tokenizer::from_gguf(file);
  const std::string text = "Führer 🦙 says hi";
  const auto ids = tok.encode(text, false);
  EXPECT_EQ(tok.decode(ids), std::string(" ").append(text));  // SentencePiece's space prefix
  Utf8Stream s;
  std::string streamed;
  for (auto id : ids) {
    const std::string part = s.push(tok.piece(id));
    for (std::size_t i = 0; i < part.size();) {  // every emitted chunk is whole UTF-8
      const unsigned char c = static_cast<unsigned char>(part[i]);
      const std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
      ASSERT_LE(i + n, part.size());
      i += n;
    }
    streamed += part;
  }
  streamed += s.flush();
  EXPECT_EQ(streamed, std::string(" ").append(text));
}

}  // namespace
}  // namespace realizar

namespace realizar {
namespace {

std::vector<std::string> words(const char* pre, std::string_view text) { return PreTokenizer::for_name(pre).split(text); }

TEST(PreTokenizer, EveryNamedPreTokenizerCompilesAndSplitsLikeItsModel) {
  for (const char* n : {"default", "gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "deepseek-coder", "falcon", "mpt", "starcoder",
                        "refact", "gpt-neox"})
    EXPECT_FALSE(words(n, "Hello world 12345!").empty()) << n;
  using V = std::vector<std::string>;
  EXPECT_EQ(words("gpt-2", "Hello world's 12345!!"), (V{"Hello", " world", "'s", " 12345", "!!"}));
  EXPECT_EQ(words("llama-bpe", "x 12345"), (V{"x", " ", "123", "45"}));
  EXPECT_EQ(words("qwen2", "x 123"), (V{"x", " ", "1", "2", "3"}));
  EXPECT_EQ(words("starcoder", "ab12"), (V{"ab", "1", "2"}));
  EXPECT_EQ(words("gpt-2", "a\xff" "b"), (V{"a", "\xEF\xBF\xBD", "b"}));  // invalid UTF-8 -> U+FFFD, no crash
  try {
    (void)PreTokenizer::for_name("no-such-pre");
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("'no-such-pre' is not supported; supported: "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace realizar
