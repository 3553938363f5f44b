// Note [Whitespace control]: like transformers' Jinja environment, a block tag ({% %}) or a comment
// eats the newline right after it (trim_blocks) and the spaces and tabs before it on its own line
// (lstrip_blocks); `{%-`, `{{-`, `{#-` strip all whitespace before the tag and `-%}`, `-}}`, `-#}` all
// whitespace after it; `{%+` and `+%}` switch lstrip/trim off for that side. Output tags ({{ }}) only
// honour the minus signs.
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "chat/lexer.h"

namespace realizar::chat {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

struct Lexer {
  const Source& src;
  std::string_view t;
  std::vector<Token> out;

  void push(Tok k, std::size_t pos, std::string text = {}) { out.push_back(Token{k, std::move(text), pos}); }

  // One string literal starting at t[p] (a quote); returns the offset after it.
  std::size_t string_literal(std::size_t p) {
    const char q = t[p];
    std::string s;
    std::size_t i = p + 1;
    for (; i < t.size() && t[i] != q; ++i) {
      if (t[i] != '\\' || i + 1 >= t.size()) {
        s += t[i];
        continue;
      }
      const char e = t[++i];
      switch (e) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case '0': s += '\0'; break;
        case '\\': case '\'': case '"': s += e; break;
        case '\n': break;  // a backslash-newline continues the line
        case 'u': case 'x': {
          const std::size_t n = e == 'u' ? 4 : 2;
          if (i + n >= t.size()) src.fail(i - 1, "string literal", "escape \\" + std::string(1, e) + " needs " + std::to_string(n) + " hex digits");
          const std::string hex(t.substr(i + 1, n));
          char* end = nullptr;
          const unsigned long cp = std::strtoul(hex.c_str(), &end, 16);
          if (end != hex.c_str() + n) src.fail(i - 1, "string literal", "escape \\" + std::string(1, e) + " needs " + std::to_string(n) + " hex digits");
          if (cp < 0x80) s += static_cast<char>(cp);
          else if (cp < 0x800) s += {static_cast<char>(0xc0 | cp >> 6), static_cast<char>(0x80 | (cp & 0x3f))};
          else s += {static_cast<char>(0xe0 | cp >> 12), static_cast<char>(0x80 | ((cp >> 6) & 0x3f)), static_cast<char>(0x80 | (cp & 0x3f))};
          i += n;
          break;
        }
        default: s += '\\'; s += e;  // Python keeps unknown escapes as written
      }
    }
    if (i >= t.size()) src.fail(p, "string literal", "the string is not closed");
    Token tok{Tok::String, std::move(s), p};
    out.push_back(std::move(tok));
    return i + 1;
  }

  std::size_t number(std::size_t p) {
    std::size_t i = p;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    bool real = false;
    if (i + 1 < t.size() && t[i] == '.' && std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
      real = true;
      for (++i; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]));) ++i;
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
      std::size_t j = i + 1;
      if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
      if (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) {
        real = true;
        for (i = j; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]));) ++i;
      }
    }
    const std::string text(t.substr(p, i - p));
    Token tok{real ? Tok::Float : Tok::Int, text, p};
    errno = 0;
    if (real) tok.f = std::strtod(text.c_str(), nullptr);
    else tok.i = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) src.fail(p, "number", "'" + text + "' is out of range");
    out.push_back(std::move(tok));
    return i;
  }

  // Expression tokens from p to the tag's end; returns the offset after the end delimiter and whether
  // it was `-%}`/`-}}` (strip) or `+%}` (plus).
  std::size_t tag_body(std::size_t start, std::size_t p, bool block, bool& minus, bool& plus) {
    const char close = block ? '%' : '}';
    int braces = 0;
    while (true) {
      while (p < t.size() && is_space(t[p])) ++p;
      if (p >= t.size()) src.fail(start, block ? "tag {% %}" : "output {{ }}", std::string("is not closed (no ") + (block ? "%}" : "}}") + ")");
      const char c = t[p];
      const auto at_end = [&](std::size_t q) { return q + 1 < t.size() && t[q] == close && t[q + 1] == '}' && braces == 0; };
      if ((c == '-' || c == '+') && at_end(p + 1)) {
        minus = c == '-';
        plus = c == '+';
        return p + 3;
      }
      if (at_end(p)) return p + 2;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t i = p;
        while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
        push(Tok::Name, p, std::string(t.substr(p, i - p)));
        p = i;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        p = number(p);
      } else if (c == '\'' || c == '"') {
        p = string_literal(p);
      } else {
        static const char* const two[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op(1, c);
        for (const char* o : two)
          if (t.substr(p, 2) == o) op = o;
        if (op.size() == 1 && std::string_view("+-*/%~<>=()[]{}.,:|").find(c) == std::string_view::npos)
          src.fail(p, "character", "'" + op + "' is not part of Jinja's expression syntax");
        if (c == '{') ++braces;
        if (c == '}') --braces;
        push(Tok::Op, p, op);
        p += op.size();
      }
    }
  }

  void run() {
    std::size_t pos = 0;
    bool strip_lead = false, trim_newline = false;
    while (true) {
      std::size_t tag = t.find('{', pos);
      while (tag != std::string_view::npos && (tag + 1 >= t.size() || std::string_view("{%#").find(t[tag + 1]) == std::string_view::npos))
        tag = t.find('{', tag + 1);
      const std::size_t end = tag == std::string_view::npos ? t.size() : tag;
      std::size_t a = pos, b = end;
      if (strip_lead) {
        while (a < b && is_space(t[a])) ++a;
      } else if (trim_newline) {
        if (a < b && t[a] == '\n') ++a;
        else if (a + 1 < b && t[a] == '\r' && t[a + 1] == '\n') a += 2;
      }
      const char kind = tag == std::string_view::npos ? 0 : t[tag + 1];
      const char mod = tag != std::string_view::npos && tag + 2 < t.size() ? t[tag + 2] : 0;
      if (mod == '-') {
        while (b > a && is_space(t[b - 1])) --b;
      } else if ((kind == '%' || kind == '#') && mod != '+') {
        std::size_t q = end;  // lstrip_blocks: only spaces and tabs between the line's start and the tag
        while (q > pos && (t[q - 1] == ' ' || t[q - 1] == '\t')) --q;
        if (q == 0 || t[q - 1] == '\n') b = std::max(a, q);
      }
      if (b > a) push(Tok::Text, a, std::string(t.substr(a, b - a)));
      if (tag == std::string_view::npos) break;
      std::size_t p = tag + 2 + ((mod == '-' || mod == '+') ? 1 : 0);
      bool minus = false, plus = false;
      if (kind == '#') {
        const std::size_t close = t.find("#}", p);
        if (close == std::string_view::npos) src.fail(tag, "comment {# #}", "is not closed (no #})");
        minus = close > p && t[close - 1] == '-';
        plus = close > p && t[close - 1] == '+';
        pos = close + 2;
      } else {
        const bool block = kind == '%';
        push(block ? Tok::BlockBegin : Tok::VarBegin, tag);
        const std::size_t body_end = tag_body(tag, p, block, minus, plus);
        push(block ? Tok::BlockEnd : Tok::VarEnd, body_end - 2);
        pos = body_end;
      }
      strip_lead = minus;
      trim_newline = kind != '{' && !minus && !plus;
    }
    push(Tok::Eof, t.size());
  }
};

}  // namespace

std::vector<Token> lex(const Source& src) {
  Lexer l{src, src.text, {}};
  l.run();
  return std::move(l.out);
}

}  // namespace realizar::chat
