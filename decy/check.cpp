// Note [Unsupported constructs]
// decy never translates what it does not understand: parse.cpp turns constructs the IR cannot hold (goto,
// switch, asm, structs, address-of, ...) into diagnostics, and this file rejects what the IR holds but GLSL
// cannot express (recursion, calls of undefined functions such as printf, doubles, partial-warp shuffles). A kernel is translated only when no diagnostic falls inside it or the
// helpers it reaches (errors in other functions of the file do not block it); libclang's own errors count
// the same way, and those outside every function (a missing header) block every kernel.
#include "check.h"

#include <algorithm>
#include <functional>
#include <set>

namespace decy {
namespace {

const std::set<std::string> kAtomicNames = {"atomicAdd", "atomicMax", "atomicMin", "atomicOr", "atomicAnd", "atomicXor", "atomicExch", "atomicCAS"};
const std::set<std::string> kBuiltins = {
    "__syncthreads", "__syncthreads_or", "__shfl_xor_sync", "__shfl_down_sync", "__shfl_sync", "expf", "__expf", "logf", "__logf", "sqrtf", "rsqrtf", "fmaxf", "fminf",
    "fabsf", "tanhf", "sinf", "cosf", "powf", "floorf", "ceilf", "fmaf", "__fdividef", "min", "max", "__float_as_int",
    "__float_as_uint", "__int_as_float", "__uint_as_float", "__decy_f16_to_f32", "__decy_f32_to_f16", "__fadd_rn", "__fsub_rn",
    "__fmul_rn", "__fdiv_rn", "__sinf", "__cosf", "exp2f", "rintf", "ldexpf", "__float2int_rn", "sincosf", "__sincosf", "frexpf",
    "make_float2", "make_float4", "make_int2", "make_int4", "make_uint2", "make_uint4", "__ldcs", "signbit", "isnan", "atomicMax", "atomicAdd", "atomicMin", "atomicOr", "atomicAnd", "atomicXor", "atomicExch", "atomicCAS", "__decy_array", "__dp4a", "erfcf", "__byte_perm",
    "__half2float", "__float2half", "__float2half_rn", "__hadd", "__hsub", "__hmul", "__hdiv", "__hneg", "__heq", "__hne", "__hlt", "__hle",
    "__hgt", "__hge", "operator+", "operator-", "operator*", "operator/", "operator==", "operator!=", "operator<", "operator<=", "operator>",
    "operator>=", "__floats2half2_rn", "__float2half2_rn", "__half22float2", "__low2float", "__high2float", "__low2half", "__high2half",
    "__halves2half2", "__hadd2", "__hsub2", "__hmul2", "__bfloat162float", "__float2bfloat16", "__float2bfloat16_rn",
    "__ballot_sync", "__dadd_rn", "__dsub_rn", "__dmul_rn", "exp", "log", "pow", "sin", "cos", "isfinite"};

bool inside(const Loc& l, const Function& f) { return l.line >= f.loc.line && l.line <= f.end_line && l.file == f.loc.file; }

class Checker {
 public:
  Checker(const Module& m, Checked& out) : m_(m), out_(out) {}

  void reach(const Function& f, std::vector<std::string>& stack) {
    stack.push_back(f.name);
    for (const auto& callee : f.calls) {
      if (is_builtin_function(callee)) continue;
      const Function* g = find_function(m_, callee);
      if (g == nullptr) {
        error(call_loc(f.body, callee, f.loc), "call to '" + callee + "' (neither a supported CUDA builtin nor a __device__ function defined in this file)");
      } else if (g->kernel) {
        error(call_loc(f.body, callee, f.loc), "launch of kernel '" + callee + "' from device code");
      } else if (std::find(stack.begin(), stack.end(), callee) != stack.end()) {
        error(call_loc(f.body, callee, f.loc), "recursive call of '" + callee + "' (GLSL has no recursion)");
      } else if (std::find(out_.helpers.begin(), out_.helpers.end(), g) == out_.helpers.end()) {
        reach(*g, stack);
        out_.helpers.push_back(g);
      }
    }
    stack.pop_back();
  }

  void function(const Function& f) {
    for (const auto& p : f.params) {
      type(p.type, p.loc, "parameter '" + p.name + "'");
      if (!f.kernel && p.type.array) error(p.loc, "array parameter '" + p.name + "' of __device__ helper '" + f.name + "'");
      if (f.kernel && p.type.reference) error(p.loc, "reference parameter '" + p.name + "' of a kernel");
    }
    if (f.ret.pointer || f.ret.array || f.ret.reference) error(f.loc, "helper '" + f.name + "' returns a pointer or reference");
    stmt(f.body);
  }

  void error(const Loc& l, std::string what) { out_.errors.push_back({l, std::move(what)}); }

 private:
  static Loc call_loc(const Stmt& s, const std::string& name, const Loc& fallback) {
    Loc found = fallback;
    bool done = false;
    std::function<void(const Expr&)> ex = [&](const Expr& e) {
      if (done) return;
      if (e.kind == Expr::Kind::Call && e.name == name) found = e.loc, done = true;
      for (const auto& a : e.args) ex(a);
    };
    std::function<void(const Stmt&)> st = [&](const Stmt& t) {
      for (const auto& d : t.decls)
        if (d.has_init) ex(d.init);
      for (const auto& e : t.exprs) ex(e);
      for (const auto& b : t.body) st(b);
    };
    st(s);
    return found;
  }

  void type(const Type& t, const Loc& l, const std::string& what) {
    if (t.scalar == Scalar::Unsupported) error(l, "type '" + t.c_name + "' of " + what + " (not in decy's subset: int, unsigned, 8-, 16- and 64-bit integers, float, double, bool and pointers to them)");
  }

  void expr(const Expr& e) {
    if (e.kind == Expr::Kind::Call && (e.name == "__shfl_xor_sync" || e.name == "__shfl_down_sync" || e.name == "__shfl_sync" || e.name == "__ballot_sync")) {
      const Expr& mask = e.args.at(0);
      if (mask.kind != Expr::Kind::IntLit || (mask.ival & 0xffffffffu) != 0xffffffffu)
        error(e.loc, e.name + " with a mask other than 0xffffffff (partial-warp shuffles are not in the subset)");
      if (e.args.size() > 3 && (e.args[3].kind != Expr::Kind::IntLit || e.args[3].ival != 32))
        error(e.loc, e.name + " with a width other than 32 (segmented shuffles are not in the subset)");
    }
    if (e.kind == Expr::Kind::Call && kAtomicNames.contains(e.name)) {
      const Expr& at = e.args.at(0);  // an element (p[i], *p) or a __shared__ variable
      const bool place = at.kind == Expr::Kind::Index || (at.kind == Expr::Kind::Var && shared_.contains(at.name));
      const bool f32 = at.type.scalar == Scalar::F32 && (e.name == "atomicAdd" || e.name == "atomicExch");  // GL_EXT_shader_atomic_float
      if (e.args.size() != (e.name == "atomicCAS" ? 3u : 2u) || !place || (at.type.scalar != Scalar::I32 && at.type.scalar != Scalar::U32 && !f32) ||
          at.type.lanes != 0)
        error(e.loc, e.name + " on '" + at.type.c_name + "'" + (place ? "" : " that is neither a buffer element nor a __shared__ variable") +
                         " (the subset's atomics: 32-bit integers, and atomicAdd / atomicExch on float)");
    }
    if (e.kind == Expr::Kind::Binary && e.op == "=" && e.args[0].type.pointer) error(e.loc, "pointer assignment (only p += n and p -= n are in the subset)");
    type(e.type, e.loc, "an expression");
    for (const auto& a : e.args) expr(a);
  }

  void stmt(const Stmt& s) {
    for (const auto& d : s.decls) {
      if (d.shared) shared_.insert(d.name);
      type(d.type, d.loc, "variable '" + d.name + "'");
      if (d.type.pointer && !d.has_init && !d.dynamic) error(d.loc, "pointer variable '" + d.name + "' without an initializer");
      if (d.has_init) expr(d.init);
    }
    for (const auto& e : s.exprs) expr(e);
    for (const auto& b : s.body) stmt(b);
  }

  const Module& m_;
  Checked& out_;
  std::set<std::string> shared_;  // the __shared__ variables met so far (atomics may target them)
};

}  // namespace

bool is_builtin_function(const std::string& name) { return kBuiltins.contains(name); }

Checked check(const Module& m, const std::string& name) {
  Checked out;
  const auto ks = kernels(m);
  if (name.empty()) {
    if (ks.size() != 1) {
      out.errors.push_back(diagnostic(m.file, 0, "the file defines " + std::to_string(ks.size()) + " kernels: name one with --kernel"));
      return out;
    }
    out.kernel = ks[0];
  } else {
    const Function* f = find_function(m, name);
    if (f == nullptr || !f->kernel) {
      std::string why = "no __global__ kernel '" + name + "' in the file";
      for (const auto& s : m.skipped)
        if (s.name == name) why = "kernel '" + name + "': " + s.why.message, out.errors.push_back(diagnostic(s.why.loc.file, s.why.loc.line, why));
      for (const auto& e : m.clang_errors)  // an instance libclang could not make (Note [Template kernels], parse.cpp)
        if (e.loc.line == 0 && e.message.starts_with("kernel instance '")) out.errors.push_back(e);
      if (out.errors.empty()) out.errors.push_back(diagnostic(m.file, 0, why));
      return out;
    }
    out.kernel = f;
  }
  Checker c(m, out);
  std::vector<std::string> stack;
  c.reach(*out.kernel, stack);
  std::vector<const Function*> all = out.helpers;
  all.push_back(out.kernel);
  for (const Function* f : all) c.function(*f);
  // Parse diagnostics and libclang's errors inside the reached functions; libclang's outside every function.
  for (const auto& d : m.diagnostics)
    if (std::any_of(all.begin(), all.end(), [&](const Function* f) { return inside(d.loc, *f); })) out.errors.push_back(d);
  for (const auto& d : m.clang_errors) {
    const bool in_reached = std::any_of(all.begin(), all.end(), [&](const Function* f) { return inside(d.loc, *f); });
    const bool in_other = std::any_of(m.functions.begin(), m.functions.end(), [&](const Function& f) { return inside(d.loc, f); });
    if (in_reached || !in_other) out.errors.push_back(d);
  }
  std::stable_sort(out.errors.begin(), out.errors.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.loc.line < b.loc.line; });
  out.errors.erase(std::unique(out.errors.begin(), out.errors.end(),
                               [](const Diagnostic& a, const Diagnostic& b) { return a.loc.line == b.loc.line && a.message == b.message; }),
                   out.errors.end());
  return out;
}

}  // namespace decy
