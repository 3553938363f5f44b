// The parsed template: expressions and statements, each with its byte offset for errors.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "realizar/chat_value.h"

namespace realizar::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using Kwargs = std::vector<std::pair<std::string, ExprPtr>>;

enum class EK {
  Literal,  // value
  Name,     // name
  List,     // kids: items (also tuples)
  Dict,     // kids: key, value, key, value, ...
  Attr,     // kids[0].name
  Index,    // kids[0][kids[1]]
  Slice,    // kids[0][kids[1]:kids[2]:kids[3]], absent parts null
  Call,     // kids[0](kids[1..], kwargs)
  Filter,   // kids[0] | name(kids[1..], kwargs)
  Test,     // kids[0] is [not] name(kids[1..])
  Not, Neg,  // kids[0]
  Binary,   // kids[0] name kids[1]: + - * / // % ** ~ == != < <= > >= in notin
  And, Or,  // kids[0], kids[1]
  Cond,     // kids[0] if kids[1] else kids[2] (null: undefined)
};

struct Expr {
  EK kind;
  std::size_t pos = 0;
  std::string name;
  Value value;
  std::vector<ExprPtr> kids;
  Kwargs kwargs;
  bool negate = false;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

enum class SK {
  Text,      // text
  Output,    // {{ expr }}
  If,        // branches: (condition or null for else, body)
  For,       // for names in expr [if cond]: body [else else_body]
  Set,       // set names = expr, or set names[0].attr = expr
  SetBlock,  // set names[0] %} body {% endset
  Macro,     // macro names[0](params) body
  Break, Continue,
};

struct Stmt {
  SK kind;
  std::size_t pos = 0;
  std::string text, attr;
  ExprPtr expr, cond;
  std::vector<std::string> names;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body, else_body;
  Kwargs params;  // macro parameters with their defaults (null: required)
};

struct Program {
  std::string name, text;
  Body body;
};

}  // namespace realizar::chat
