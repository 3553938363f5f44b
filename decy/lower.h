// IR rewrites and checks the parser (parse.cpp) applies to what it has read: a switch as an if/else chain,
// and a lambda's assignments to its captures (refused: Note [Lambdas and template helpers]).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "ir.h"

namespace decy {

// The statements under one or more case labels (values already converted to the switch's type) or default.
struct CaseGroup {
  std::vector<Expr> values;
  bool is_default = false;
  std::vector<Stmt> body;
  Loc loc;
};

// `{ T decy_switch_<line> = cond; if (v == a || v == b) {..} else if .. else {default} }`. Every group must
// end in break (dropped), return or continue, or be the last; a group falling into the next, or holding a
// break elsewhere (it would leave the switch), is a diagnostic appended to `errors`.
Stmt lower_switch(Expr cond, std::vector<CaseGroup> groups, const Loc& loc, std::vector<Diagnostic>& errors);

// A diagnostic for each assignment (=, op=, ++, --) in f's body to a variable named in `captures`.
void find_capture_assignments(const Function& f, const std::set<std::string>& captures, std::vector<Diagnostic>& errors);

}  // namespace decy
