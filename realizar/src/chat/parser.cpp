// Note [Jinja subset]
// Statements: if/elif/else, for (one or more targets, an `if` filter, else), set (names, ns.attr,
// set blocks), macro (with defaults), break/continue, generation (transparent); comments.
// Expressions: literals (strings, ints, floats, true/false/none, lists, tuples, dicts), names,
// .attr, [index], [a:b:c] slices, calls with keyword arguments, filters, `is [not]` tests,
// `in`/`not in`, comparisons, and/or/not, + - * / // % ** ~, `a if b else c`. Anything else (include,
// import, extends, block, call, raw, with, filter blocks, a filter or test realizar lacks) is refused
// at parse time, naming it and where it is.
#include "chat/parser.h"

#include <algorithm>
#include <initializer_list>

#include "chat/builtins.h"

namespace realizar::chat {
namespace {

constexpr int kMaxDepth = 200;  // nesting of expressions and blocks; deeper is an error, not a stack overflow

class Parser {
 public:
  Parser(const Source& src, std::vector<Token> toks) : src_(src), t_(std::move(toks)) {}

  Body program() {
    Body body;
    const std::string stop = block_body(body, {});
    if (!stop.empty()) src_.fail(t_[i_].pos, "tag '" + stop + "'", "has no opening tag");
    return body;
  }

 private:
  const Source& src_;
  std::vector<Token> t_;
  std::size_t i_ = 0;
  int depth_ = 0;

  struct Deeper {
    Parser& p;
    explicit Deeper(Parser& parser, std::size_t pos) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.src_.fail(pos, "nesting", "deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~Deeper() { --p.depth_; }
  };

  const Token& peek(std::size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(i_++, t_.size() - 1)]; }
  bool is_op(const char* op, std::size_t k = 0) const { return peek(k).kind == Tok::Op && peek(k).text == op; }
  bool is_name(const char* n, std::size_t k = 0) const { return peek(k).kind == Tok::Name && peek(k).text == n; }
  bool accept_op(const char* op) { return is_op(op) ? (++i_, true) : false; }
  bool accept_name(const char* n) { return is_name(n) ? (++i_, true) : false; }

  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::Eof: return "the end of the template";
      case Tok::BlockEnd: return "'%}'";
      case Tok::VarEnd: return "'}}'";
      case Tok::Text: return "text";
      case Tok::String: return "a string";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] void unexpected(const std::string& construct, const std::string& wanted) const {
    src_.fail(peek().pos, construct, "expected " + wanted + ", found " + describe(peek()));
  }
  void expect_op(const char* op, const std::string& construct) {
    if (!accept_op(op)) unexpected(construct, std::string("'") + op + "'");
  }
  void expect(Tok k, const std::string& construct) {
    if (peek().kind != k) unexpected(construct, k == Tok::BlockEnd ? "'%}'" : k == Tok::VarEnd ? "'}}'" : "a name");
    ++i_;
  }
  std::string name(const std::string& construct) {
    if (peek().kind != Tok::Name) unexpected(construct, "a name");
    return next().text;
  }

  static ExprPtr node(EK k, std::size_t pos, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->pos = pos;
    e->name = std::move(name);
    return e;
  }

  // ---- statements ----

  // Parses until a block tag named in stops (returned, with the tag's name consumed) or the end ("").
  std::string block_body(Body& body, std::initializer_list<const char*> stops) {
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::Eof) return "";
      if (t.kind == Tok::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = SK::Text;
        s->pos = t.pos;
        s->text = t.text;
        body.push_back(std::move(s));
        ++i_;
      } else if (t.kind == Tok::VarBegin) {
        auto s = std::make_unique<Stmt>();
        s->kind = SK::Output;
        s->pos = next().pos;
        s->expr = expr();
        expect(Tok::VarEnd, "output {{ }}");
        body.push_back(std::move(s));
      } else if (t.kind == Tok::BlockBegin) {
        if (peek(1).kind == Tok::Name)
          for (const char* stop : stops)
            if (peek(1).text == stop) {
              i_ += 2;
              return stop;
            }
        statement(body);
      } else {
        unexpected("template", "text or a tag");
      }
    }
  }

  Body until(std::size_t open, const std::string& tag, std::initializer_list<const char*> stops, std::string* stop_out) {
    Deeper d(*this, open);
    Body body;
    const std::string stop = block_body(body, stops);
    if (stop.empty()) src_.fail(open, "tag '" + tag + "'", "is not closed: the template ends before {% end" + tag + " %}");
    if (stop_out) *stop_out = stop;
    return body;
  }

  void statement(Body& body) {
    const std::size_t pos = next().pos;  // {%
    if (peek().kind != Tok::Name) unexpected("tag {% %}", "a statement name");
    const std::string kw = next().text;
    auto s = std::make_unique<Stmt>();
    s->pos = pos;
    if (kw == "if") {
      s->kind = SK::If;
      ExprPtr cond = expr();
      std::string stop;
      while (true) {
        expect(Tok::BlockEnd, "tag 'if'");
        Body b = until(pos, "if", {"elif", "else", "endif"}, &stop);
        s->branches.emplace_back(std::move(cond), std::move(b));
        if (stop == "endif") break;
        if (stop == "elif") {
          cond = expr();
        } else {
          expect(Tok::BlockEnd, "tag 'else'");
          s->branches.emplace_back(nullptr, until(pos, "if", {"endif"}, &stop));
          break;
        }
      }
    } else if (kw == "for") {
      s->kind = SK::For;
      do s->names.push_back(name("tag 'for'"));
      while (accept_op(","));
      if (!accept_name("in")) unexpected("tag 'for'", "'in'");
      s->expr = or_expr();
      if (accept_name("if")) s->cond = or_expr();
      if (is_name("recursive")) src_.fail(peek().pos, "for ... recursive", "recursive loops are not supported");
      expect(Tok::BlockEnd, "tag 'for'");
      std::string stop;
      s->body = until(pos, "for", {"else", "endfor"}, &stop);
      if (stop == "else") {
        expect(Tok::BlockEnd, "tag 'else'");
        s->else_body = until(pos, "for", {"endfor"}, nullptr);
      }
    } else if (kw == "set") {
      s->names.push_back(name("tag 'set'"));
      if (accept_op(".")) s->attr = name("tag 'set'");
      while (s->attr.empty() && accept_op(",")) s->names.push_back(name("tag 'set'"));
      if (accept_op("=")) {
        s->kind = SK::Set;
        s->expr = tuple_expr();
      } else {
        if (s->names.size() != 1 || !s->attr.empty()) unexpected("tag 'set'", "'='");
        s->kind = SK::SetBlock;
        expect(Tok::BlockEnd, "tag 'set'");
        s->body = until(pos, "set", {"endset"}, nullptr);
      }
    } else if (kw == "macro") {
      s->kind = SK::Macro;
      s->names.push_back(name("tag 'macro'"));
      expect_op("(", "tag 'macro'");
      while (!accept_op(")")) {
        std::string p = name("macro parameters");
        s->params.emplace_back(std::move(p), accept_op("=") ? expr() : nullptr);
        if (!is_op(")")) expect_op(",", "macro parameters");
      }
      expect(Tok::BlockEnd, "tag 'macro'");
      s->body = until(pos, "macro", {"endmacro"}, nullptr);
    } else if (kw == "break" || kw == "continue") {
      s->kind = kw == "break" ? SK::Break : SK::Continue;
    } else if (kw == "generation") {  // transformers' marker of assistant text: renders its body
      expect(Tok::BlockEnd, "tag 'generation'");
      Body b = until(pos, "generation", {"endgeneration"}, nullptr);
      expect(Tok::BlockEnd, "tag 'endgeneration'");
      for (auto& x : b) body.push_back(std::move(x));
      return;
    } else {
      static const char* const known[] = {"include", "import", "from", "extends", "block", "call", "raw", "with",
                                          "filter", "autoescape", "do", "trans"};
      for (const char* k : known)
        if (kw == k) src_.fail(pos, "tag '" + kw + "'", "is not supported by realizar's Jinja subset");
      if (kw.starts_with("end") || kw == "else" || kw == "elif")
        src_.fail(pos, "tag '" + kw + "'", "has no matching opening tag here");
      src_.fail(pos, "tag '" + kw + "'", "is not a Jinja statement realizar knows");
    }
    expect(Tok::BlockEnd, "tag '" + kw + "'");
    body.push_back(std::move(s));
  }

  // ---- expressions, lowest precedence first ----

  ExprPtr tuple_expr() {  // `set a, b = 1, 2`
    ExprPtr first = expr();
    if (!is_op(",")) return first;
    auto l = node(EK::List, first->pos);
    l->kids.push_back(std::move(first));
    while (accept_op(",")) l->kids.push_back(expr());
    return l;
  }

  ExprPtr expr() {
    Deeper d(*this, peek().pos);
    ExprPtr e = or_expr();
    if (!is_name("if")) return e;
    auto c = node(EK::Cond, next().pos);
    c->kids.push_back(std::move(e));
    c->kids.push_back(or_expr());
    c->kids.push_back(accept_name("else") ? expr() : nullptr);
    return c;
  }

  ExprPtr binary(EK k, std::size_t pos, std::string op, ExprPtr a, ExprPtr b) {
    auto e = node(k, pos, std::move(op));
    e->kids.push_back(std::move(a));
    e->kids.push_back(std::move(b));
    return e;
  }

  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (is_name("or")) {
      const std::size_t pos = next().pos;  // (consumed before the right operand is parsed)
      e = binary(EK::Or, pos, "or", std::move(e), and_expr());
    }
    return e;
  }
  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (is_name("and")) {
      const std::size_t pos = next().pos;
      e = binary(EK::And, pos, "and", std::move(e), not_expr());
    }
    return e;
  }
  ExprPtr not_expr() {
    if (!is_name("not")) return compare();
    Deeper d(*this, peek().pos);
    auto e = node(EK::Not, next().pos);
    e->kids.push_back(not_expr());
    return e;
  }
  ExprPtr compare() {
    ExprPtr e = concat();
    while (true) {
      const Token& t = peek();
      std::string op;
      if (t.kind == Tok::Op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) op = t.text;
      else if (is_name("in")) op = "in";
      else if (is_name("not") && is_name("in", 1)) op = "notin";
      else return e;
      const std::size_t pos = next().pos;
      if (op == "notin") ++i_;
      e = binary(EK::Binary, pos, op, std::move(e), concat());
    }
  }
  ExprPtr concat() {
    ExprPtr e = additive();
    while (is_op("~")) {
      const std::size_t pos = next().pos;
      e = binary(EK::Binary, pos, "~", std::move(e), additive());
    }
    return e;
  }
  ExprPtr additive() {
    ExprPtr e = multiplicative();
    while (is_op("+") || is_op("-")) {
      const Token t = next();
      e = binary(EK::Binary, t.pos, t.text, std::move(e), multiplicative());
    }
    return e;
  }
  ExprPtr multiplicative() {
    ExprPtr e = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token t = next();
      e = binary(EK::Binary, t.pos, t.text, std::move(e), power());
    }
    return e;
  }
  ExprPtr power() {
    ExprPtr e = unary();
    while (is_op("**")) {
      const std::size_t pos = next().pos;
      e = binary(EK::Binary, pos, "**", std::move(e), unary());
    }
    return e;
  }
  ExprPtr unary() {
    if (is_op("-") || is_op("+")) {
      Deeper d(*this, peek().pos);
      const Token& t = next();
      if (t.text == "+") return unary();
      auto e = node(EK::Neg, t.pos);
      e->kids.push_back(unary());
      return e;
    }
    return postfix(primary());
  }

  void call_args(Expr& e, const std::string& construct) {  // after '('
    while (!accept_op(")")) {
      if (peek().kind == Tok::Name && is_op("=", 1)) {
        std::string k = next().text;
        ++i_;
        e.kwargs.emplace_back(std::move(k), expr());
      } else {
        if (!e.kwargs.empty()) src_.fail(peek().pos, construct, "a positional argument follows a keyword argument");
        e.kids.push_back(expr());
      }
      if (!is_op(")")) expect_op(",", construct);
    }
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (is_op(".")) {
        const std::size_t pos = next().pos;
        auto a = node(EK::Attr, pos, name("attribute"));
        a->kids.push_back(std::move(e));
        e = std::move(a);
      } else if (is_op("[")) {
        e = subscript(std::move(e));
      } else if (is_op("(")) {
        auto c = node(EK::Call, next().pos);
        c->kids.push_back(std::move(e));
        call_args(*c, "call");
        e = std::move(c);
      } else if (is_op("|")) {
        const std::size_t pos = next().pos;
        auto f = node(EK::Filter, pos, name("filter"));
        if (!is_filter(f->name)) src_.fail(f->pos, "filter '" + f->name + "'", "is not supported (supported: " + filter_names() + ")");
        f->kids.push_back(std::move(e));
        if (accept_op("(")) call_args(*f, "filter '" + f->name + "'");
        e = std::move(f);
      } else if (is_name("is")) {
        const std::size_t pos = next().pos;
        const bool neg = accept_name("not");
        auto t = node(EK::Test, pos, name("test"));
        t->negate = neg;
        if (!is_test(t->name)) src_.fail(t->pos, "test '" + t->name + "'", "is not supported (supported: " + test_names() + ")");
        t->kids.push_back(std::move(e));
        if (accept_op("(")) {
          call_args(*t, "test '" + t->name + "'");
        } else {
          const Token& a = peek();
          const bool arg = a.kind == Tok::String || a.kind == Tok::Int || a.kind == Tok::Float ||
                           (a.kind == Tok::Name && a.text != "and" && a.text != "or" && a.text != "else" && a.text != "if" &&
                            a.text != "in" && a.text != "not" && a.text != "is");
          if (arg) t->kids.push_back(postfix(primary()));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  ExprPtr subscript(ExprPtr subject) {
    const std::size_t pos = next().pos;  // [
    ExprPtr parts[3];
    int colons = 0;
    while (!is_op("]")) {
      if (accept_op(":")) {
        if (++colons > 2) src_.fail(pos, "slice", "has more than two ':'");
      } else {
        if (parts[colons]) unexpected("subscript", "']' or ':'");
        parts[colons] = expr();
      }
    }
    ++i_;
    if (colons == 0 && !parts[0]) src_.fail(pos, "subscript", "is empty");
    auto e = node(colons ? EK::Slice : EK::Index, pos);
    e->kids.push_back(std::move(subject));
    for (int k = 0; k < (colons ? 3 : 1); ++k) e->kids.push_back(std::move(parts[k]));
    return e;
  }

  ExprPtr primary() {
    Deeper d(*this, peek().pos);
    const Token& t = peek();
    if (t.kind == Tok::Name) {
      ++i_;
      auto lit = [&](Value v) {
        auto e = node(EK::Literal, t.pos);
        e->value = std::move(v);
        return e;
      };
      if (t.text == "true" || t.text == "True") return lit(true);
      if (t.text == "false" || t.text == "False") return lit(false);
      if (t.text == "none" || t.text == "None") return lit(nullptr);
      return node(EK::Name, t.pos, t.text);
    }
    if (t.kind == Tok::String) {
      auto e = node(EK::Literal, t.pos);
      std::string s;
      while (peek().kind == Tok::String) s += next().text;  // adjacent literals concatenate
      e->value = std::move(s);
      return e;
    }
    if (t.kind == Tok::Int || t.kind == Tok::Float) {
      ++i_;
      auto e = node(EK::Literal, t.pos);
      e->value = t.kind == Tok::Int ? Value(t.i) : Value(t.f);
      return e;
    }
    if (is_op("(")) {
      ++i_;
      if (accept_op(")")) return node(EK::List, t.pos);
      ExprPtr first = expr();
      if (accept_op(")")) return first;
      auto l = node(EK::List, t.pos);  // a tuple
      l->kids.push_back(std::move(first));
      while (accept_op(",") && !is_op(")")) l->kids.push_back(expr());
      expect_op(")", "tuple");
      return l;
    }
    if (is_op("[")) {
      ++i_;
      auto l = node(EK::List, t.pos);
      while (!accept_op("]")) {
        l->kids.push_back(expr());
        if (!is_op("]")) expect_op(",", "list");
      }
      return l;
    }
    if (is_op("{")) {
      ++i_;
      auto m = node(EK::Dict, t.pos);
      while (!accept_op("}")) {
        m->kids.push_back(expr());
        expect_op(":", "dict");
        m->kids.push_back(expr());
        if (!is_op("}")) expect_op(",", "dict");
      }
      return m;
    }
    unexpected("expression", "a value");
  }
};

}  // namespace

std::unique_ptr<Program> parse_program(std::string text, std::string name) {
  auto p = std::make_unique<Program>();
  p->text = std::move(text);
  p->name = std::move(name);
  const Source src{p->name, p->text};
  Parser parser(src, lex(src));
  p->body = parser.program();
  return p;
}

}  // namespace realizar::chat
