// Template text to tokens: literal text between tags (with Jinja's whitespace control and
// transformers' trim_blocks + lstrip_blocks already applied), tag delimiters, and expression tokens.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chat/source.h"

namespace realizar::chat {

enum class Tok { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
  Tok kind = Tok::Eof;
  std::string text;  // Text: the text; Name, Op: the spelling; String: the decoded value
  std::size_t pos = 0;
  std::int64_t i = 0;
  double f = 0;
};

// Throws TemplateError (unclosed tag or comment, a bad character or string).
std::vector<Token> lex(const Source& src);

}  // namespace realizar::chat
