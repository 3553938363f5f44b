// Note [WGSL limits]
// What the WGSL target cannot express of a kernel that check() accepted, as diagnostics naming the
// construct and its line (never a silent mistranslation: Note [Unsupported constructs]). WGSL (without
// extensions Dawn/browsers ship) has no 64-bit integers (but see Note [64-bit indices]), no 16-bit types (storage buffers hold 32-bit
// elements; f16 needs the shader-f16 feature, which SwiftShader and some desktop GPUs lack), no bool in
// host-shareable memory, no reference (inout) parameters here, assignments and ++/-- only as statements,
// no comma operator, and `?:` as select(), which evaluates both arms (a call there could write memory).
// Warp shuffles and warpSize need the `subgroups` feature, requested explicitly (--subgroups).
#include <algorithm>
#include <set>

#include "check.h"

namespace decy {
namespace {

class WgslChecker {
 public:
  WgslChecker(const WgslCheckOptions& o, std::vector<Diagnostic>& out) : o_(o), out_(out) {}

  void function(const Function& f) {
    for (const auto& p : f.params) {
      type(p.type, p.loc, "parameter '" + p.name + "'");
      if (f.kernel && p.type.scalar == Scalar::Bool)
        error(p.loc, std::string("bool ") + (p.type.pointer ? "buffer" : "parameter") + " '" + p.name +
                         "' (WGSL's bool is not host-shareable: pass an int)");
      if (!f.kernel && p.type.reference) error(p.loc, "reference parameter '" + p.name + "' of helper '" + f.name + "' (not in the WGSL slice)");
    }
    stmt(f.body);
  }

 private:
  void error(const Loc& l, std::string what) { out_.push_back({l, std::move(what)}); }

  // One diagnostic per line and kind for expressions (a u64 index makes several u64 subexpressions).
  void type(const Type& t, const Loc& l, const std::string& what) {
    const bool wide = t.scalar == Scalar::I64 || t.scalar == Scalar::U64, narrow = t.scalar == Scalar::U16 || t.scalar == Scalar::I16;
    const bool bytes = t.scalar == Scalar::U8 || t.scalar == Scalar::I8;
    if (what == "an expression" && (wide || narrow || bytes) &&
        !seen_.insert(l.file + ":" + std::to_string(l.line) + (wide ? "/64" : narrow ? "/16" : "/8")).second)
      return;
    if (t.scalar == Scalar::F64 && seen_.insert(l.file + ":" + std::to_string(l.line) + "/f64").second)
      error(l, "double in " + what + " (WGSL has no 64-bit floats)");
    if (t.scalar == Scalar::Record && seen_.insert(l.file + ":" + std::to_string(l.line) + "/struct").second)
      error(l, "struct type '" + t.c_name + "' of " + what + " (not in decy's WGSL target: Note [Structs of scalars] is GLSL's)");
    if (t.lanes != 0 && seen_.insert(l.file + ":" + std::to_string(l.line) + "/vec").second)
      error(l, "vector type '" + t.c_name + "' of " + what + " (not in decy's WGSL target: Note [Vector types] is GLSL's)");
    if (wide)
      error(l, "64-bit integer type '" + t.c_name + "' of " + what + " (WGSL has no 64-bit integers)");
    else if (bytes)  // Note [WGSL limits]: packing bytes into u32 words (atomics for stores) is not done
      error(l, "8-bit integer type '" + t.c_name + "' of " + what + " (WGSL has no 8-bit types: storage buffers hold 32-bit elements)");
    else if (narrow)
      error(l, "16-bit integer type '" + t.c_name + "' of " + what +
                   " (WGSL has no 16-bit types: storage buffers hold 32-bit elements, f16 needs shader-f16)");
  }

  static bool assigns(const Expr& e) {
    return e.kind == Expr::Kind::Postfix || (e.kind == Expr::Kind::Unary && (e.op == "++" || e.op == "--")) ||
           (e.kind == Expr::Kind::Binary && e.op.back() == '=' && e.op != "==" && e.op != "!=" && e.op != "<=" && e.op != ">=");
  }

  // `top`: the expression is a statement of its own (or a for loop's init/update), where WGSL allows one
  // assignment, increment or call; a statement-level comma is split into statements.
  static bool is64(Scalar s) { return s == Scalar::I64 || s == Scalar::U64; }
  static bool is32int(Scalar s) { return s == Scalar::I32 || s == Scalar::U32; }

  // Note [64-bit indices]: a 64-bit element index or pointer offset built only from +, -, *, unary -, 64-bit
  // literals and conversions of 32-bit integers (y[(u64)row * n + i]) has, modulo 2^32, the value of the same
  // arithmetic on the low 32 bits (a ring homomorphism; a conversion's low 32 bits are the value's bits), and
  // an element a WGSL binding holds has an index below 2^32: computed in u32 it is exact. Division, %, shifts,
  // comparisons and 64-bit variables do not commute with the truncation and stay refused.
  static bool ring64(const Expr& e) {
    if (!is64(e.type.scalar) || e.type.pointer) return false;
    switch (e.kind) {
      case Expr::Kind::IntLit: return true;
      case Expr::Kind::Cast: return is32int(e.args[0].type.scalar) || ring64(e.args[0]);
      case Expr::Kind::Unary: return e.op == "-" && ring64(e.args[0]);
      case Expr::Kind::Binary: return (e.op == "+" || e.op == "-" || e.op == "*") && ring64(e.args[0]) && ring64(e.args[1]);
      default: return false;
    }
  }
  // The 32-bit leaves of a ring64 tree, checked as any expression.
  void ring_leaves(const Expr& e) {
    if (e.kind == Expr::Kind::Cast && !is64(e.args[0].type.scalar)) return expr(e.args[0], false);
    if (e.kind != Expr::Kind::IntLit)
      for (const auto& a : e.args) ring_leaves(a);
  }
  // e's operand i is an element index or a pointer offset (Note [64-bit indices]).
  static bool index_operand(const Expr& e, std::size_t i) {
    if (e.kind == Expr::Kind::Index) return i == 1;
    const bool step = e.kind == Expr::Kind::Binary && (e.op == "+" || e.op == "-" || e.op == "+=" || e.op == "-=");
    return step && e.args.size() == 2 && (e.args[0].type.pointer || e.args[1].type.pointer) && !e.args[i].type.pointer;
  }

  void expr(const Expr& e, bool top) {
    if (e.kind == Expr::Kind::Binary && e.op == ",") {
      if (!top) error(e.loc, "comma operator inside an expression (WGSL has none)");
      expr(e.args[0], top), expr(e.args[1], top);
      return;
    }
    if (!top && assigns(e)) error(e.loc, "'" + e.op + "' inside an expression (WGSL has assignments and ++/-- only as statements)");
    if (e.kind == Expr::Kind::Cond)
      for (std::size_t i = 1; i < e.args.size(); ++i)
        if (calls_helper(e.args[i]))
          error(e.loc, "a function call in an arm of ?: (WGSL's select() evaluates both arms: write an if)");
    if (e.kind == Expr::Kind::Call && (e.name == "__shfl_xor_sync" || e.name == "__shfl_down_sync") && !o_.subgroups)
      error(e.loc, e.name + " needs subgroups (translate with --subgroups; the device needs WebGPU's 'subgroups' feature)");
    if (e.kind == Expr::Kind::Builtin && e.name.find("SubgroupSize") != std::string::npos && !o_.subgroups)
      error(e.loc, "warpSize needs subgroups (translate with --subgroups; it is WGSL's subgroup_size)");
    if (e.kind == Expr::Kind::Cast && (e.type.pointer || (!e.args.empty() && e.args[0].type.pointer)))
      error(e.loc, "reinterpret_cast of a pointer (views with another element type are GLSL-only: Note [Vector types], glsl_support.cpp)");
    type(e.type, e.loc, "an expression");
    for (std::size_t i = 0; i < e.args.size(); ++i) {
      if (index_operand(e, i) && ring64(e.args[i])) ring_leaves(e.args[i]);
      else expr(e.args[i], false);
    }
  }

  static bool calls_helper(const Expr& e) {
    if (e.kind == Expr::Kind::Call && !is_builtin_function(e.name)) return true;
    for (const auto& a : e.args)
      if (calls_helper(a)) return true;
    return false;
  }

  void stmt(const Stmt& s) {
    for (const auto& d : s.decls) {
      if (d.dynamic) error(d.loc, "extern __shared__ '" + d.name + "' (decy's WGSL has no dynamic shared memory: Note [Dynamic shared memory] is GLSL's)");
      type(d.type, d.loc, "variable '" + d.name + "'");
      if (d.has_init) expr(d.init, false);
    }
    const bool for_loop = s.kind == Stmt::Kind::For;
    for (std::size_t i = 0; i < s.exprs.size(); ++i)
      expr(s.exprs[i], s.kind == Stmt::Kind::Expr || (for_loop && i == 1));  // a for loop's exprs: cond, inc
    if (for_loop && !s.exprs.empty() && s.exprs.size() > 1 && s.exprs[1].kind == Expr::Kind::Binary && s.exprs[1].op == ",")
      error(s.exprs[1].loc, "comma operator in a for loop's increment (WGSL's for takes one statement there)");
    if (for_loop && !s.body.empty() && s.body[0].decls.size() > 1) error(s.body[0].loc, "a for loop declaring several variables");
    for (const auto& b : s.body) stmt(b);
  }

  const WgslCheckOptions& o_;
  std::vector<Diagnostic>& out_;
  std::set<std::string> seen_;
};

}  // namespace

std::vector<Diagnostic> check_wgsl(const Checked& c, const WgslCheckOptions& options) {
  std::vector<Diagnostic> out;
  if (c.kernel == nullptr) return out;
  WgslChecker w(options, out);
  for (const Function* f : c.helpers) w.function(*f);
  w.function(*c.kernel);
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.loc.line < b.loc.line; });
  out.erase(std::unique(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.loc.line == b.loc.line && a.message == b.message; }),
            out.end());
  return out;
}

}  // namespace decy
