// The evaluator. Scopes follow Jinja: a for loop's body has its own scope (so `set` inside a loop is
// not seen after it, which is why templates use namespace()); if blocks do not; a macro sees the
// globals and its parameters.
#include "chat/eval.h"

#include <cmath>

#include "chat/builtins.h"

namespace realizar::chat {
namespace {

constexpr int kMaxCallDepth = 100;               // macro recursion
constexpr std::size_t kMaxOutput = 64u << 20;    // bytes of rendered text

// The text of a name/attribute/index chain ("message.tool_calls", "messages[0]"), for errors.
std::string expr_text(const Expr& e) {
  switch (e.kind) {
    case EK::Name: return e.name;
    case EK::Attr: return expr_text(*e.kids[0]) + "." + e.name;
    case EK::Index: return expr_text(*e.kids[0]) + "[" + (e.kids[1]->kind == EK::Literal ? e.kids[1]->value.repr() : "...") + "]";
    case EK::Literal: return e.value.repr();
    case EK::Call: return expr_text(*e.kids[0]) + "()";
    case EK::Filter: return expr_text(*e.kids[0]) + "|" + e.name;
    default: return "the value";
  }
}

class Evaluator {
 public:
  explicit Evaluator(const Program& p) : src_{p.name, p.text} {}

  std::string run(const Program& p, Dict globals) {
    add_globals(globals, src_);
    frames_.push_back(std::move(globals));
    const Flow f = exec(p.body);
    if (f != Flow::Normal) src_.fail(0, f == Flow::Break ? "break" : "continue", "used outside a for loop");
    return std::move(out_);
  }

 private:
  enum class Flow { Normal, Break, Continue };
  Source src_;
  std::vector<Dict> frames_;  // [0]: globals; one more per loop body and macro call
  std::string out_;
  int calls_ = 0;

  Site at(std::size_t pos) const { return Site{src_, pos}; }

  Value lookup(const std::string& name) const {
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
      if (const Value* v = f->find(name)) return *v;
    return Value::undefined(name);
  }

  void emit(const std::string& s, std::size_t pos) {
    out_ += s;
    if (out_.size() > kMaxOutput) src_.fail(pos, "output", "the rendered text exceeds " + std::to_string(kMaxOutput >> 20) + " MiB");
  }

  void bind(const Stmt& s, const Value& v, Dict& frame) {
    if (s.names.size() == 1) {
      frame.set(s.names[0], v);
      return;
    }
    const Site site = at(s.pos);
    List items = iterate(site, v, "the value to unpack");
    if (items.size() != s.names.size())
      site.fail(s.kind == SK::For ? "tag 'for'" : "tag 'set'", "cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(s.names.size()) + " names");
    for (std::size_t i = 0; i < items.size(); ++i) frame.set(s.names[i], items[i]);
  }

  Flow exec(const Body& body) {
    for (const auto& sp : body) {
      const Stmt& s = *sp;
      switch (s.kind) {
        case SK::Text: emit(s.text, s.pos); break;
        case SK::Output: emit(eval(*s.expr).str(), s.pos); break;
        case SK::If:
          for (const auto& [cond, b] : s.branches)
            if (!cond || eval(*cond).truthy()) {
              const Flow f = exec(b);
              if (f != Flow::Normal) return f;
              break;
            }
          break;
        case SK::For: run_for(s); break;
        case SK::Set: {
          Value v = eval(*s.expr);
          if (s.attr.empty()) {
            bind(s, v, frames_.back());
            break;
          }
          const Value target = lookup(s.names[0]);
          if (!target.is_dict() || !target.dict().is_namespace)
            at(s.pos).fail("set " + s.names[0] + "." + s.attr, "can only assign attributes of a namespace() object; '" + s.names[0] + "' is " + describe(target));
          target.dict().set(s.attr, std::move(v));
          break;
        }
        case SK::SetBlock: {
          std::string saved;
          std::swap(saved, out_);
          exec(s.body);
          std::swap(saved, out_);
          frames_.back().set(s.names[0], Value(std::move(saved)));
          break;
        }
        case SK::Macro: frames_.back().set(s.names[0], macro(s)); break;
        case SK::Break: return Flow::Break;
        case SK::Continue: return Flow::Continue;
      }
    }
    return Flow::Normal;
  }

  void run_for(const Stmt& s) {
    const Site site = at(s.pos);
    List items = iterate(site, eval(*s.expr), expr_text(*s.expr));
    if (s.cond) {  // `for x in xs if cond`: the loop (and loop.length) sees only the items that pass
      List kept;
      for (auto& v : items) {
        frames_.emplace_back();
        bind(s, v, frames_.back());
        const bool keep = eval(*s.cond).truthy();
        frames_.pop_back();
        if (keep) kept.push_back(std::move(v));
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      exec(s.else_body);
      return;
    }
    const auto n = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < n; ++i) {
      Dict loop;
      loop.set("index", i + 1);
      loop.set("index0", i);
      loop.set("revindex", n - i);
      loop.set("revindex0", n - i - 1);
      loop.set("first", i == 0);
      loop.set("last", i == n - 1);
      loop.set("length", n);
      loop.set("depth", 1);
      loop.set("depth0", 0);
      if (i > 0) loop.set("previtem", items[static_cast<std::size_t>(i - 1)]);
      if (i + 1 < n) loop.set("nextitem", items[static_cast<std::size_t>(i + 1)]);
      loop.set("cycle", Value::function("loop.cycle", [i](CallArgs& a) -> Value {
        return a.args.empty() ? Value() : a.args[static_cast<std::size_t>(i) % a.args.size()];
      }));
      frames_.emplace_back();
      bind(s, items[static_cast<std::size_t>(i)], frames_.back());
      frames_.back().set("loop", Value(std::move(loop)));
      const Flow f = exec(s.body);
      frames_.pop_back();
      if (f == Flow::Break) break;
    }
  }

  Value macro(const Stmt& s) {
    return Value::function(s.names[0], [this, &s](CallArgs& a) -> Value {
      const Site site = at(a.pos);
      const std::string what = "macro '" + s.names[0] + "'";
      if (a.args.size() > s.params.size())
        site.fail(what, "takes " + std::to_string(s.params.size()) + " arguments, " + std::to_string(a.args.size()) + " given");
      if (++calls_ > kMaxCallDepth) site.fail(what, "calls nest deeper than " + std::to_string(kMaxCallDepth) + " (unbounded recursion?)");
      std::vector<Dict> saved(std::make_move_iterator(frames_.begin() + 1), std::make_move_iterator(frames_.end()));
      frames_.resize(1);
      frames_.emplace_back();
      for (const auto& [k, v] : a.kwargs) {
        bool known = false;
        for (const auto& p : s.params) known = known || p.first == k;
        if (!known) site.fail(what, "has no parameter '" + k + "'");
      }
      for (std::size_t i = 0; i < s.params.size(); ++i) {
        const auto& [name, def] = s.params[i];
        Value v = i < a.args.size() ? a.args[i] : Value::undefined(name);
        for (const auto& [k, kv] : a.kwargs)
          if (k == name) v = kv;
        if (v.is_undefined() && i >= a.args.size() && def) v = eval(*def);
        frames_.back().set(name, std::move(v));
      }
      std::string saved_out;
      std::swap(saved_out, out_);
      exec(s.body);
      std::swap(saved_out, out_);
      frames_.resize(1);
      for (auto& f : saved) frames_.push_back(std::move(f));
      --calls_;
      return Value(std::move(saved_out));
    });
  }

  CallArgs args_of(const Expr& e, std::size_t first) {
    CallArgs a;
    a.pos = e.pos;
    for (std::size_t i = first; i < e.kids.size(); ++i) a.args.push_back(e.kids[i] ? eval(*e.kids[i]) : Value());
    for (const auto& [k, v] : e.kwargs) a.kwargs.emplace_back(k, eval(*v));
    return a;
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.kids[0];
    if (callee.kind == EK::Attr) {
      const Value self = eval(*callee.kids[0]);
      CallArgs a = args_of(e, 1);
      if (self.is_dict() && !has_method(self, callee.name)) {
        const Value* f = self.dict().find(callee.name);
        if (f && f->kind() == Value::Kind::Function) return f->fn()(a);
      }
      if (self.is_undefined()) at(callee.pos).fail("call " + expr_text(callee) + "()", "'" + self.as_string() + "' is undefined");
      return call_method(at(callee.pos), self, callee.name, a);
    }
    const Value f = eval(callee);
    if (f.kind() != Value::Kind::Function) {
      const std::string what = "call " + expr_text(callee) + "()";
      if (f.is_undefined())
        at(e.pos).fail(what, "'" + f.as_string() + "' is undefined (functions realizar defines: raise_exception, range, namespace, dict, strftime_now, and macros)");
      at(e.pos).fail(what, expr_text(callee) + " is " + describe(f) + ", not a function");
    }
    CallArgs a = args_of(e, 1);
    return f.fn()(a);
  }

  Value binary(const Expr& e, const Value& a, const Value& b);

 public:
  Value eval(const Expr& e) {
    switch (e.kind) {
      case EK::Literal: return e.value;
      case EK::Name: return lookup(e.name);
      case EK::List: {
        List l;
        for (const auto& k : e.kids) l.push_back(eval(*k));
        return Value(std::move(l));
      }
      case EK::Dict: {
        Dict d;
        for (std::size_t i = 0; i + 1 < e.kids.size(); i += 2) {
          const Value k = eval(*e.kids[i]);
          if (!k.is_string()) at(e.kids[i]->pos).fail("dict literal", "keys must be strings; this one is " + describe(k));
          d.set(k.as_string(), eval(*e.kids[i + 1]));
        }
        return Value(std::move(d));
      }
      case EK::Attr: return get_attr(at(e.pos), eval(*e.kids[0]), e.name, expr_text(*e.kids[0]));
      case EK::Index: return get_item(at(e.pos), eval(*e.kids[0]), eval(*e.kids[1]), expr_text(*e.kids[0]));
      case EK::Slice: {
        CallArgs a = args_of(e, 1);
        return call_method(at(e.pos), eval(*e.kids[0]), "__slice__", a);
      }
      case EK::Call: return call(e);
      case EK::Filter: {
        CallArgs a = args_of(e, 1);
        return apply_filter(at(e.pos), e.name, eval(*e.kids[0]), a);
      }
      case EK::Test: {
        CallArgs a = args_of(e, 1);
        return apply_test(at(e.pos), e.name, eval(*e.kids[0]), a) != e.negate;
      }
      case EK::Not: return !eval(*e.kids[0]).truthy();
      case EK::Neg: {
        const Value v = eval(*e.kids[0]);
        if (v.kind() == Value::Kind::Float) return -v.as_float();
        if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool) return -v.as_int();
        at(e.pos).fail("unary '-'", "needs a number, not " + describe(v));
      }
      case EK::And: {
        Value a = eval(*e.kids[0]);
        return a.truthy() ? eval(*e.kids[1]) : a;
      }
      case EK::Or: {
        Value a = eval(*e.kids[0]);
        return a.truthy() ? a : eval(*e.kids[1]);
      }
      case EK::Cond:
        if (eval(*e.kids[1]).truthy()) return eval(*e.kids[0]);
        return e.kids[2] ? eval(*e.kids[2]) : Value::undefined("the conditional expression's missing else");
      case EK::Binary: return binary(e, eval(*e.kids[0]), eval(*e.kids[1]));
    }
    return Value();
  }
};

bool numeric(const Value& v) { return v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Float || v.kind() == Value::Kind::Bool; }

Value Evaluator::binary(const Expr& e, const Value& a, const Value& b) {
  const std::string& op = e.name;
  const Site site = at(e.pos);
  const std::string what = "operator '" + (op == "notin" ? std::string("not in") : op) + "'";
  if (op == "~") return a.str() + b.str();
  if (op == "==") return a == b;
  if (op == "!=") return !(a == b);
  for (const Value* v : {&a, &b})
    if (v->is_undefined()) site.fail(what, "'" + v->as_string() + "' is undefined");
  if (op == "in" || op == "notin") {
    bool found = false;
    if (b.is_string()) {
      if (!a.is_string()) site.fail(what, "'in <string>' needs a string on the left, not " + describe(a));
      found = b.as_string().find(a.as_string()) != std::string::npos;
    } else if (b.is_list()) {
      for (const auto& x : b.list()) found = found || x == a;
    } else if (b.is_dict()) {
      found = a.is_string() && b.dict().find(a.as_string()) != nullptr;
    } else {
      site.fail(what, "needs a string, list or dict on the right, not " + describe(b));
    }
    return found == (op == "in");
  }
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    int c;
    if (numeric(a) && numeric(b)) c = a.as_float() < b.as_float() ? -1 : a.as_float() > b.as_float() ? 1 : 0;
    else if (a.is_string() && b.is_string()) c = a.as_string().compare(b.as_string());
    else site.fail(what, "cannot compare " + describe(a) + " with " + describe(b));
    return op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
  }
  if (op == "+" && a.is_string() && b.is_string()) return a.as_string() + b.as_string();
  if (op == "+" && a.is_list() && b.is_list()) {
    List l = a.list();
    l.insert(l.end(), b.list().begin(), b.list().end());
    return Value(std::move(l));
  }
  if (op == "*" && (a.is_string() || a.is_list()) && (b.kind() == Value::Kind::Int || b.kind() == Value::Kind::Bool)) {
    const std::int64_t n = std::max<std::int64_t>(0, b.as_int());
    const std::size_t unit = a.is_string() ? a.as_string().size() : a.list().size();
    if (unit > 0 && static_cast<std::uint64_t>(n) > kMaxOutput / unit) site.fail(what, "the repeated value would exceed " + std::to_string(kMaxOutput >> 20) + " MiB");
    if (a.is_string()) {
      std::string s;
      for (std::int64_t i = 0; i < n; ++i) s += a.as_string();
      return s;
    }
    List l;
    for (std::int64_t i = 0; i < n; ++i) l.insert(l.end(), a.list().begin(), a.list().end());
    return Value(std::move(l));
  }
  if (!numeric(a) || !numeric(b)) site.fail(what, "unsupported operands: " + describe(a) + " and " + describe(b));
  const bool real = a.kind() == Value::Kind::Float || b.kind() == Value::Kind::Float;
  const double x = a.as_float(), y = b.as_float();
  const std::int64_t i = a.as_int(), j = b.as_int();
  if (op == "/" || op == "//" || op == "%") {
    if (y == 0) site.fail(what, "division by zero");
    if (op == "/") return x / y;
    if (real) return op == "//" ? std::floor(x / y) : x - y * std::floor(x / y);
    if (i == INT64_MIN && j == -1) site.fail(what, "integer overflow");
    std::int64_t q = i / j, r = i % j;
    if (r != 0 && ((r < 0) != (j < 0))) --q, r += j;  // Python floors
    return op == "//" ? q : r;
  }
  if (op == "**") {
    const double p = std::pow(x, y);
    if (real || j < 0) return p;
    if (!(std::fabs(p) < 9.2e18)) site.fail(what, "integer overflow");
    return static_cast<std::int64_t>(p);
  }
  std::int64_t r = 0;
  bool overflow = false;
  if (op == "+") overflow = __builtin_add_overflow(i, j, &r);
  else if (op == "-") overflow = __builtin_sub_overflow(i, j, &r);
  else if (op == "*") overflow = __builtin_mul_overflow(i, j, &r);
  if (real) return op == "+" ? x + y : op == "-" ? x - y : x * y;
  if (overflow) site.fail(what, "integer overflow");
  return r;
}

}  // namespace

std::string render_program(const Program& p, Dict globals) {
  Evaluator ev(p);
  return ev.run(p, std::move(globals));
}

}  // namespace realizar::chat
