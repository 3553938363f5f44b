// IR rewrites and checks the parser applies (lower.h): switch -> if/else chain, assignments to captures.
#include "lower.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace decy {
namespace {

// Whether a case group's block ends the case (its trailing break removed); false when it falls through
// (unless it is the last) or holds another break outside a nested loop.
bool case_ends(Stmt& block, bool last) {
  std::function<bool(const Stmt&)> breaks = [&](const Stmt& t) {
    if (t.kind == Stmt::Kind::Break) return true;
    if (t.kind == Stmt::Kind::For || t.kind == Stmt::Kind::While || t.kind == Stmt::Kind::Do) return false;
    return std::any_of(t.body.begin(), t.body.end(), breaks);
  };
  Stmt* tail = &block;
  while (tail->kind == Stmt::Kind::Block && !tail->body.empty() && tail->body.back().kind == Stmt::Kind::Block) tail = &tail->body.back();
  bool ends = last;
  if (tail->kind == Stmt::Kind::Block && !tail->body.empty()) {
    const Stmt::Kind k = tail->body.back().kind;
    if (k == Stmt::Kind::Break) tail->body.pop_back(), ends = true;
    else if (k == Stmt::Kind::Return || k == Stmt::Kind::Continue) ends = true;
  }
  return ends && !breaks(block);
}

Expr binary(const char* op, Expr a, Expr b, const Loc& loc) {
  Expr e;
  e.kind = Expr::Kind::Binary, e.op = op, e.type.scalar = Scalar::Bool, e.loc = loc;
  e.args.push_back(std::move(a)), e.args.push_back(std::move(b));
  return e;
}

}  // namespace

Stmt lower_switch(Expr cond, std::vector<CaseGroup> groups, const Loc& loc, std::vector<Diagnostic>& errors) {
  VarDecl v;
  v.name = "decy_switch_" + std::to_string(loc.line), v.loc = loc, v.type = cond.type, v.init = std::move(cond), v.has_init = true;
  v.type.is_const = false;
  Stmt out, decl;
  decl.kind = Stmt::Kind::Decl, decl.loc = loc, decl.decls.push_back(v);
  out.kind = Stmt::Kind::Block, out.loc = loc, out.body.push_back(std::move(decl));
  std::vector<Stmt> branches;  // the non-default groups' blocks, with their conditions
  std::vector<Expr> conds;
  std::optional<Stmt> chain;   // the default's block: the innermost else
  for (std::size_t g = 0; g < groups.size(); ++g) {
    CaseGroup& gr = groups[g];
    Stmt block;
    block.kind = Stmt::Kind::Block, block.loc = gr.loc, block.body = std::move(gr.body);
    if (!case_ends(block, g + 1 == groups.size()))
      errors.push_back(diagnostic(gr.loc.file, gr.loc.line, "a switch case that falls into the next, or breaks out of the switch early"));
    if (gr.is_default) {
      chain = std::move(block);
      continue;
    }
    std::optional<Expr> any;
    for (Expr& value : gr.values) {
      Expr ref;
      ref.kind = Expr::Kind::Var, ref.name = v.name, ref.type = v.type, ref.loc = gr.loc;
      Expr eq = binary("==", std::move(ref), std::move(value), gr.loc);
      any = any ? binary("||", std::move(*any), std::move(eq), gr.loc) : std::move(eq);
    }
    if (!any) continue;
    conds.push_back(std::move(*any)), branches.push_back(std::move(block));
  }
  for (std::size_t i = branches.size(); i-- > 0;) {
    Stmt s;
    s.kind = Stmt::Kind::If, s.loc = branches[i].loc;
    s.exprs.push_back(std::move(conds[i]));
    s.body.push_back(std::move(branches[i]));
    if (chain) s.body.push_back(std::move(*chain));
    chain = std::move(s);
  }
  if (chain) out.body.push_back(std::move(*chain));
  return out;
}

void find_capture_assignments(const Function& f, const std::set<std::string>& captures, std::vector<Diagnostic>& errors) {
  std::function<void(const Expr&)> ex = [&](const Expr& e) {
    const bool assigns = e.kind == Expr::Kind::Binary && e.op.size() >= 1 && e.op.back() == '=' && e.op != "==" && e.op != "!=" &&
                         e.op != "<=" && e.op != ">=";
    const bool steps = (e.kind == Expr::Kind::Unary || e.kind == Expr::Kind::Postfix) && (e.op == "++" || e.op == "--");
    if ((assigns || steps) && !e.args.empty() && e.args[0].kind == Expr::Kind::Var && captures.contains(e.args[0].name))
      errors.push_back(diagnostic(e.loc.file, e.loc.line, "a lambda assigning to its capture '" + e.args[0].name + "'"));
    for (const auto& a : e.args) ex(a);
  };
  std::function<void(const Stmt&)> st = [&](const Stmt& t) {
    for (const auto& d : t.decls)
      if (d.has_init) ex(d.init);
    for (const auto& e : t.exprs) ex(e);
    for (const auto& b : t.body) st(b);
  };
  st(f.body);
}

}  // namespace decy
