// Codegen: decy's IR -> WGSL compute. Note [CUDA to WGSL]: as Note [CUDA to GLSL] (glsl.cpp), a CUDA block
// is a workgroup whose x size is the pipeline-overridable constant decy_block_x (blockDim.x; y = z = 1), the
// grid is dispatchWorkgroups; each pointer parameter is `var<storage, read>` (const) or `read_write` at
// @binding = its rank among the pointer parameters, named decy_b_<name>; the scalar parameters are the
// members of `struct DecyParams` in a uniform buffer bound after them (WGSL has no push constants), copied
// into locals at entry; `p += n` and local pointers are u32 element offsets decy_off_<name>; __shared__
// arrays are var<workgroup>; __syncthreads() is storageBarrier(); workgroupBarrier() (CUDA's barrier also
// orders global memory within the block). The entry point's builtins (decy_lid, decy_wid, decy_nwg and,
// with subgroups, decy_sgs / decy_sgid) are passed on to the helpers that use them. WGSL statements:
// assignments and ++/-- only as statements (check_wgsl refuses them elsewhere), `c ? a : b` is
// select(b, a, c), a do-while a loop with a `break if` continuing. Integer / and % truncate as C's.
#include "wgsl.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace decy {
namespace {

// WGSL's keywords, reserved words and the builtin functions decy emits (a C name among them is renamed).
const std::set<std::string> kReserved = {
    "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic", "discard", "else",
    "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires", "return", "struct", "switch", "true", "var",
    "while", "array", "atomic", "bool", "f16", "f32", "i32", "u32", "mat2x2", "mat3x3", "mat4x4", "ptr", "sampler", "vec2", "vec3",
    "vec4", "NULL", "Self", "abstract", "active", "alignas", "alignof", "as", "asm", "asm_fragment", "async", "attribute", "auto",
    "await", "become", "binding_array", "cast", "catch", "class", "co_await", "co_return", "co_yield", "coherent", "column_major",
    "common", "compile", "compile_fragment", "concept", "const_cast", "consteval", "constexpr", "constinit", "crate", "debugger",
    "decltype", "delete", "demote", "demote_to_helper", "do", "dynamic_cast", "enum", "explicit", "export", "extends", "extern",
    "external", "fallthrough", "filter", "final", "finally", "friend", "from", "fxgroup", "get", "goto", "groupshared", "highp",
    "impl", "implements", "import", "inline", "instanceof", "interface", "layout", "lowp", "macro", "macro_rules", "match",
    "mediump", "meta", "mod", "module", "move", "mut", "mutable", "namespace", "new", "nil", "noexcept", "noinline",
    "nointerpolation", "noperspective", "null", "nullptr", "of", "operator", "package", "packoffset", "partition", "pass", "patch",
    "pixelfragment", "precise", "precision", "premerge", "priv", "protected", "pub", "public", "readonly", "ref", "regardless",
    "register", "reinterpret_cast", "require", "resource", "restrict", "self", "set", "shared", "sizeof", "smooth", "snorm",
    "static", "static_assert", "static_cast", "std", "subroutine", "super", "target", "template", "this", "thread_local", "throw",
    "trait", "try", "type", "typedef", "typeid", "typename", "typeof", "union", "unless", "unorm", "unsafe", "unsized", "use",
    "using", "varying", "virtual", "volatile", "wgsl", "where", "with", "writeonly", "yield", "main", "exp", "log", "sqrt",
    "inverseSqrt", "max", "min", "abs", "tanh", "sin", "cos", "pow", "floor", "ceil", "fma", "bitcast", "select",
    "workgroupBarrier", "storageBarrier", "subgroupShuffleXor", "subgroupShuffleDown", "read", "read_write", "storage",
    "uniform", "workgroup", "function", "private", "vec3u", "vec3i", "vec3f"};

// Generated names all start with "decy_"; a C name that does, or that WGSL reserves, gets "decy_" before
// it (so it can never meet a generated one), and "__" (invalid in WGSL) becomes "_u".
std::string rename(const std::string& n) {
  if (kReserved.contains(n) || n.find("__") != std::string::npos || n.starts_with("decy_") || n.starts_with("_")) {
    std::string r = "decy_";
    for (char ch : n) r += ch == '_' && r.back() == '_' ? 'u' : ch;
    return r;
  }
  return n;
}

const char* wgsl_type(Scalar s) {
  switch (s) {
    case Scalar::Bool: return "bool";
    case Scalar::I32: return "i32";
    case Scalar::U32: return "u32";
    case Scalar::F32: return "f32";
    default: return "f32 /*unsupported*/";  // refused by check_wgsl
  }
}

// "(a + b)" -> "a + b" where the outer parentheses enclose the whole text.
std::string bare(const std::string& t) {
  if (t.size() < 2 || t.front() != '(' || t.back() != ')') return t;
  int depth = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 < t.size()) return t;
  }
  return t.substr(1, t.size() - 2);
}

bool is_assignment(const std::string& op) {
  return !op.empty() && op.back() == '=' && op != "==" && op != "!=" && op != "<=" && op != ">=";
}

// Note [WGSL math accuracy] (WGSL spec, "Floating Point Accuracy", f32): exp 3 + 2|x| ULP; log 3 ULP outside
// [0.5, 2], absolute 2^-21 inside; sqrt as 1 / inverseSqrt (2 ULP + the division's 2.5); inverseSqrt 2 ULP;
// pow via exp2(y * log2(x)); sin / cos absolute 2^-11 on [-pi, pi]; tanh via sinh / cosh; x / y 2.5 ULP for
// |y| in [2^-126, 2^126]; fma, min, max, abs, floor, ceil and the bitcasts exact. CUDA's expf is 2 ULP,
// __expf / __logf / __fdividef the fast variants: the contracts' nmse bounds cover both.
const std::map<std::string, std::string> kMath = {
    {"expf", "exp"},   {"__expf", "exp"},   {"logf", "log"},   {"__logf", "log"}, {"sqrtf", "sqrt"}, {"rsqrtf", "inverseSqrt"},
    {"fmaxf", "max"},  {"fminf", "min"},    {"fabsf", "abs"},  {"tanhf", "tanh"}, {"sinf", "sin"},   {"cosf", "cos"},
    {"powf", "pow"},   {"floorf", "floor"}, {"ceilf", "ceil"}, {"fmaf", "fma"},   {"min", "min"},    {"max", "max"},
    {"__float_as_int", "bitcast<i32>"}, {"__float_as_uint", "bitcast<u32>"}, {"__int_as_float", "bitcast<f32>"},
    {"__uint_as_float", "bitcast<f32>"}};

class Emitter {
 public:
  Emitter(const Checked& c, const WgslOptions& o, Wgsl& out) : c_(c), o_(o), out_(out) {}

  std::string run(const std::string& source) {
    const Function& k = *c_.kernel;
    std::uint32_t binding = 0;
    for (const auto& p : k.params) {
      if (p.type.pointer) {
        buffers_[p.name] = binding++;
        out_.bindings.push_back({p.name, wgsl_type(p.type.scalar), p.type.is_const});
      } else {
        out_.uniforms.push_back({rename(p.name), wgsl_type(p.type.scalar), out_.uniform_bytes, 4});
        out_.uniform_bytes += 4;  // i32, u32, f32: size and alignment 4 (check_wgsl refuses the rest)
      }
    }
    std::vector<const Function*> all = c_.helpers;
    all.push_back(&k);
    for (const Function* f : all) collect_shared(f->body, f->name), sg_ = sg_ || (o_.subgroups && shuffles(f->body));
    fn_ = k.name;
    for (const auto& p : k.params)
      if (p.type.pointer && assigned(k.body, p.name)) offsets_[p.name] = "decy_off_" + rename(p.name);

    std::ostringstream body;
    body << "@compute @workgroup_size(decy_block_x)\nfn main(@builtin(local_invocation_id) decy_lid: vec3<u32>, "
         << "@builtin(workgroup_id) decy_wid: vec3<u32>,\n        @builtin(num_workgroups) decy_nwg: vec3<u32>"
         << (sg_ ? ", @builtin(subgroup_size) decy_sgs: u32, @builtin(subgroup_invocation_id) decy_sgid: u32" : "") << ") {\n";
    for (const auto& p : k.params)
      if (!p.type.pointer) body << "  var " << rename(p.name) << ": " << wgsl_type(p.type.scalar) << " = decy_u." << rename(p.name) << ";\n";
    for (const auto& [name, off] : offsets_) body << "  var " << off << ": u32 = 0u;\n";
    level_ = 1;
    for (const auto& s : k.body.body) body << stmt(s);
    body << "}\n";
    std::string text;
    for (const auto& h : helper_texts_) text += h + "\n";
    return header(source) + globals() + text + body.str();
  }

 private:
  void error(const Loc& l, std::string what) { out_.errors.push_back({l, std::move(what)}); }

  std::string header(const std::string& source) {
    const Function& k = *c_.kernel;
    std::ostringstream h;
    h << "// Generated by decy from " << source << ", kernel " << (k.instance.empty() ? k.name : k.instance) << "; do not edit (docs/DECY.md, \"WGSL\").\n"
      << "// Launch: one workgroup per CUDA block, entry point main; @workgroup_size(decy_block_x), y = z = 1: set the\n"
      << "//   override constant decy_block_x (blockDim.x) in the pipeline's compute.constants;\n"
      << "//   dispatchWorkgroups(gridDim.x, gridDim.y, gridDim.z).\n"
      << "// Bindings (@group(0)), one storage buffer per pointer parameter in order (32-bit elements):\n";
    std::size_t b = 0;
    for (const auto& p : k.params)
      if (p.type.pointer) {
        const WgslBinding& w = out_.bindings[b];
        h << "//   @binding(" << b << "): decy_b_" << rename(w.name) << " array<" << w.type << "> "
          << (w.readonly ? "read-only storage" : "read_write storage") << " (" << p.type.c_name << " " << p.name << ")\n";
        ++b;
      }
    if (b == 0) h << "//   none\n";
    if (out_.uniforms.empty()) {
      h << "// Scalar parameters: none (no uniform binding).\n";
    } else {
      h << "// Scalar parameters: @binding(" << b << "), a uniform buffer holding struct DecyParams (" << out_.uniform_bytes
        << " bytes, little-endian; bind a multiple of 16), in parameter order:\n";
      for (const auto& u : out_.uniforms) h << "//   offset " << u.offset << ": " << u.type << " " << u.name << " (" << u.size << " bytes)\n";
    }
    if (subgroup_)
      h << "// Subgroups: needs the WebGPU feature 'subgroups'; warp shuffles are subgroup shuffles and warpSize is\n"
        << "//   subgroup_size. As CUDA's full-mask shuffles, they assume the whole subgroup takes part (subgroup\n"
        << "//   uniformity analysis off) and a lane = local_invocation_id.x % subgroup_size; code that assumes a warp of\n"
        << "//   32 lanes needs a subgroup of 32.\n";
    return h.str();
  }

  std::string globals() {
    std::ostringstream g;
    if (subgroup_) g << "enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n";
    g << "\noverride decy_block_x: u32;\n\n";
    const Function& k = *c_.kernel;
    for (const auto& p : k.params)
      if (p.type.pointer)
        g << "@group(0) @binding(" << buffers_.at(p.name) << ") var<storage, " << (p.type.is_const ? "read" : "read_write") << "> decy_b_"
          << rename(p.name) << ": array<" << wgsl_type(p.type.scalar) << ">;\n";
    if (!out_.uniforms.empty()) {
      g << "struct DecyParams {";
      for (std::size_t i = 0; i < out_.uniforms.size(); ++i) g << (i ? ", " : " ") << out_.uniforms[i].name << ": " << out_.uniforms[i].type;
      g << " }\n@group(0) @binding(" << out_.bindings.size() << ") var<uniform> decy_u: DecyParams;\n";
    }
    for (const auto& [s, name] : shared_)
      g << "var<workgroup> " << name << ": "
        << (s.type.array ? "array<" + std::string(wgsl_type(s.type.scalar)) + ", " + std::to_string(s.type.array) + ">" : wgsl_type(s.type.scalar))
        << ";\n";
    if (shuffle_down_)
      for (const char* t : {"f32", "i32", "u32"})
        g << "\nfn decy_shfl_down_" << t << "(v: " << t << ", d: u32, decy_sgs: u32, decy_sgid: u32) -> " << t
          << " {  // CUDA: lanes past the end keep their value\n  let r = subgroupShuffleDown(v, d);\n"
          << "  return select(v, r, decy_sgid + d < decy_sgs);\n}\n";
    g << "\n";
    return g.str();
  }

  // __shared__ variables become var<workgroup> globals, one per (function, name); a name two functions
  // use, or a helper's name, gets its function's name before it.
  void collect_shared(const Stmt& s, const std::string& fn) {
    for (const auto& d : s.decls)
      if (d.shared) {
        if (d.has_init) error(d.loc, "__shared__ variable '" + d.name + "' with an initializer");
        std::string name = rename(d.name);
        bool clash = false;
        for (const auto& o : shared_) clash = clash || o.second == name;
        for (const Function* f : c_.helpers) clash = clash || rename(f->name) == name;
        if (clash) name = "decy_" + rename(fn) + "_" + rename(d.name);
        shared_names_[fn + "/" + d.name] = name;
        shared_.emplace_back(d, name);
      }
    for (const auto& b : s.body) collect_shared(b, fn);
  }

  std::string var_name(const std::string& name) const {
    auto it = shared_names_.find(fn_ + "/" + name);
    return it != shared_names_.end() ? it->second : rename(name);
  }

  static bool assigned_expr(const Expr& e, const std::string& name) {
    const bool target = !e.args.empty() && e.args[0].kind == Expr::Kind::Var && e.args[0].name == name;
    if (target && (e.kind == Expr::Kind::Postfix || (e.kind == Expr::Kind::Unary && (e.op == "++" || e.op == "--")) ||
                   (e.kind == Expr::Kind::Binary && is_assignment(e.op))))
      return true;
    for (const auto& a : e.args)
      if (assigned_expr(a, name)) return true;
    return false;
  }
  static bool assigned(const Stmt& s, const std::string& name) {
    for (const auto& e : s.exprs)
      if (assigned_expr(e, name)) return true;
    for (const auto& d : s.decls)
      if (d.has_init && assigned_expr(d.init, name)) return true;
    for (const auto& b : s.body)
      if (assigned(b, name)) return true;
    return false;
  }

  // Whether f (or a helper it calls) reads an index variable or shuffles: it then takes the entry
  // point's builtins as its last parameters.
  bool uses_builtins(const Function& f) {
    if (auto it = builtin_users_.find(f.name); it != builtin_users_.end()) return it->second;
    bool uses = false;
    std::function<void(const Expr&)> ex = [&](const Expr& e) {
      if (e.kind == Expr::Kind::Builtin && e.name.find("WorkGroupSize") == std::string::npos) uses = true;
      if (e.kind == Expr::Kind::Call && e.name == "__shfl_down_sync") uses = true;
      if (e.kind == Expr::Kind::Call)
        for (const Function* h : c_.helpers)
          if (h->name == e.name && uses_builtins(*h)) uses = true;
      for (const auto& a : e.args) ex(a);
    };
    std::function<void(const Stmt&)> st = [&](const Stmt& s) {
      for (const auto& d : s.decls)
        if (d.has_init) ex(d.init);
      for (const auto& e : s.exprs) ex(e);
      for (const auto& b : s.body) st(b);
    };
    st(f.body);
    return builtin_users_[f.name] = uses;
  }
  // Whether s shuffles or reads warpSize (then the module enables subgroups).
  static bool shuffles(const Stmt& s) {
    std::function<bool(const Expr&)> ex = [&](const Expr& e) {
      if (e.kind == Expr::Kind::Call && (e.name == "__shfl_xor_sync" || e.name == "__shfl_down_sync")) return true;
      if (e.kind == Expr::Kind::Builtin && e.name.find("SubgroupSize") != std::string::npos) return true;
      for (const auto& a : e.args)
        if (ex(a)) return true;
      return false;
    };
    for (const auto& d : s.decls)
      if (d.has_init && ex(d.init)) return true;
    for (const auto& e : s.exprs)
      if (ex(e)) return true;
    for (const auto& b : s.body)
      if (shuffles(b)) return true;
    return false;
  }
  std::string builtin_params() const {
    return std::string("decy_lid: vec3<u32>, decy_wid: vec3<u32>, decy_nwg: vec3<u32>") + (sg_ ? ", decy_sgs: u32, decy_sgid: u32" : "");
  }
  std::string builtin_args() const { return std::string("decy_lid, decy_wid, decy_nwg") + (sg_ ? ", decy_sgs, decy_sgid" : ""); }

  // Note [Helpers with pointer parameters] (glsl.cpp): a helper is emitted once per combination of buffers
  // its pointer parameters get, each pointer an element offset `decy_off_<p>: u32`. WGSL parameters are
  // immutable: a parameter the helper assigns is copied into a var of its name.
  std::string helper(const Function& f, const std::vector<std::string>& buffers) {
    std::string name = rename(f.name);
    for (const auto& b : buffers) name += "_" + b;
    if (!buffers.empty()) name = "decy_" + name;
    if (emitted_.contains(name)) return name;
    emitted_.insert(name);
    auto saved_views = std::move(views_);
    auto saved_offsets = std::move(offsets_);
    const int saved_level = level_;
    const std::string saved_fn = fn_;
    fn_ = f.name;
    views_.clear(), offsets_.clear();
    std::ostringstream o, copies;
    o << "fn " << name << "(";
    std::size_t b = 0;
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      const auto& p = f.params[i];
      o << (i ? ", " : "");
      if (p.type.pointer) {
        views_[p.name] = "decy_b_" + buffers.at(b++);
        o << "decy_off_" << rename(p.name) << "_in: u32";
        copies << "  var decy_off_" << rename(p.name) << ": u32 = decy_off_" << rename(p.name) << "_in;\n";
      } else if (assigned(f.body, p.name)) {
        o << "decy_in_" << rename(p.name) << ": " << wgsl_type(p.type.scalar);
        copies << "  var " << rename(p.name) << ": " << wgsl_type(p.type.scalar) << " = decy_in_" << rename(p.name) << ";\n";
      } else {
        o << rename(p.name) << ": " << wgsl_type(p.type.scalar);
      }
    }
    if (uses_builtins(f)) o << (f.params.empty() ? "" : ", ") << builtin_params();
    o << ")" << (f.ret.scalar == Scalar::Void ? "" : std::string(" -> ") + wgsl_type(f.ret.scalar)) << " {\n" << copies.str();
    level_ = 1;
    for (const auto& s : f.body.body) o << stmt(s);
    o << "}\n";
    helper_texts_.push_back(o.str());  // callees complete first
    views_ = std::move(saved_views), offsets_ = std::move(saved_offsets), level_ = saved_level, fn_ = saved_fn;
    return name;
  }

  // A pointer expression (p, p + n, n + p, p - n, nested): the buffer and the offset expression (at least "0u").
  bool pointer_arg(const Expr& e, std::string* buffer, std::string* offset) {
    if (e.kind == Expr::Kind::Binary && (e.op == "+" || e.op == "-") && e.type.pointer) {
      const bool left = e.args[0].type.pointer;
      if (!left && e.op == "-") return false;
      if (!pointer_arg(e.args[left ? 0 : 1], buffer, offset)) return false;
      *offset = "(" + *offset + " " + e.op + " " + as_uint(e.args[left ? 1 : 0]) + ")";
      return true;
    }
    if (!pointer_of(e, buffer, offset)) return false;
    if (offset->empty()) *offset = "0u";
    return true;
  }

  std::string indent() const { return std::string(2 * static_cast<std::size_t>(level_), ' '); }

  // The buffer (its WGSL name) a pointer variable points into, and its element offset ("" when none).
  bool pointer_of(const Expr& e, std::string* buffer, std::string* offset) {
    if (e.kind != Expr::Kind::Var || !e.type.pointer) return false;
    if (auto v = views_.find(e.name); v != views_.end()) {
      *buffer = v->second, *offset = "decy_off_" + rename(e.name);
      return true;
    }
    if (!buffers_.contains(e.name)) return false;
    *buffer = "decy_b_" + rename(e.name);
    auto o = offsets_.find(e.name);
    *offset = o != offsets_.end() ? o->second : "";
    return true;
  }

  std::string as_uint(const Expr& e) {
    if (e.kind == Expr::Kind::IntLit && static_cast<std::int64_t>(e.ival) >= 0 && e.ival <= 0xffffffffu) return std::to_string(e.ival) + "u";
    return e.type.scalar == Scalar::U32 || is64(e.type.scalar) ? ex(e) : "u32(" + bare(ex(e)) + ")";  // 64-bit: ring64's u32
  }

  std::string literal(const Expr& e) {
    if (e.type.scalar == Scalar::U32) return std::to_string(static_cast<std::uint32_t>(e.ival)) + "u";
    const auto v = static_cast<std::int32_t>(e.ival);
    if (v == INT32_MIN) return "bitcast<i32>(0x80000000u)";
    if (e.type.scalar == Scalar::F32) return float_literal(static_cast<double>(static_cast<std::int64_t>(e.ival)));
    return v < 0 ? "(" + std::to_string(v) + "i)" : std::to_string(v) + "i";
  }

  std::string float_literal(double d) {
    const float f = static_cast<float>(d);
    if (std::isnan(f)) return "bitcast<f32>(0x7fc00000u)";
    if (std::isinf(f)) return f > 0 ? "bitcast<f32>(0x7f800000u)" : "bitcast<f32>(0xff800000u)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    s += "f";
    return std::signbit(f) ? "(" + s + ")" : s;
  }

  std::string call(const Expr& e) {
    if (e.name == "__decy_array") {  // an array's initializer list (parse.cpp): array<T, N>(...)
      std::string s = std::string("array<") + wgsl_type(e.type.scalar) + ", " + std::to_string(e.type.array) + ">(";
      for (std::size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + bare(ex(e.args[i]));
      return s + ")";
    }
    if (e.name == "__shfl_xor_sync" || e.name == "__shfl_down_sync") {
      subgroup_ = true;
      if (e.name == "__shfl_xor_sync") return "subgroupShuffleXor(" + bare(ex(e.args.at(1))) + ", " + as_uint(e.args.at(2)) + ")";
      shuffle_down_ = true;
      return std::string("decy_shfl_down_") + wgsl_type(e.type.scalar) + "(" + bare(ex(e.args.at(1))) + ", " + as_uint(e.args.at(2)) +
             ", decy_sgs, decy_sgid)";
    }
    if (e.name == "__fdividef") return "(" + ex(e.args.at(0)) + " / " + ex(e.args.at(1)) + ")";
    for (const Function* f : c_.helpers) {
      if (f->name != e.name) continue;
      std::vector<std::string> buffers, args;
      for (std::size_t i = 0; i < e.args.size() && i < f->params.size(); ++i) {
        if (!f->params[i].type.pointer) {
          args.push_back(bare(ex(e.args[i])));
          continue;
        }
        std::string buffer, offset;
        if (!pointer_arg(e.args[i], &buffer, &offset)) {
          error(e.loc, "pointer argument " + std::to_string(i + 1) + " of '" + e.name + "' that is not a parameter's buffer plus an offset");
          return "0";
        }
        buffers.push_back(buffer.substr(7)), args.push_back(bare(offset));  // "decy_b_x" -> "x" in the helper's name
      }
      std::string s = helper(*f, buffers) + "(";
      for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      if (uses_builtins(*f)) s += std::string(args.empty() ? "" : ", ") + builtin_args();
      return s + ")";
    }
    auto m = kMath.find(e.name);
    if (m == kMath.end()) {
      error(e.loc, "call of '" + e.name + "' (no WGSL counterpart in decy)");
      return "0";
    }
    std::string s = m->second + "(";
    for (std::size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + bare(ex(e.args[i]));
    return s + ")";
  }

  std::string builtin(const Expr& e) {
    static const std::map<std::string, std::string> kMap = {
        {"gl_LocalInvocationID", "decy_lid"}, {"gl_WorkGroupID", "decy_wid"}, {"gl_NumWorkGroups", "decy_nwg"}};
    if (e.name == "int(gl_SubgroupSize)") return subgroup_ = true, "i32(decy_sgs)";
    const auto dot = e.name.find('.');
    const std::string base = e.name.substr(0, dot), field = dot == std::string::npos ? "" : e.name.substr(dot + 1);
    if (base == "gl_WorkGroupSize") return field == "x" ? "decy_block_x" : "1u";
    if (auto it = kMap.find(base); it != kMap.end()) return it->second + "." + field;
    error(e.loc, "builtin '" + e.name + "' (no WGSL counterpart in decy)");
    return "0";
  }

  static bool is64(Scalar s) { return s == Scalar::I64 || s == Scalar::U64; }

  // A 64-bit index or offset that check_wgsl admitted (Note [64-bit indices], check_wgsl.cpp): the same
  // +, -, * on the low 32 bits, in u32.
  std::string ring64(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::IntLit: return std::to_string(static_cast<std::uint32_t>(e.ival)) + "u";
      case Expr::Kind::Cast:
        if (is64(e.args[0].type.scalar)) return ring64(e.args[0]);
        return e.args[0].type.scalar == Scalar::U32 ? ex(e.args[0]) : "u32(" + bare(ex(e.args[0])) + ")";  // i32 -> u32: the bits
      case Expr::Kind::Unary:
        if (e.op == "-") return "(0u - " + ring64(e.args[0]) + ")";
        break;
      case Expr::Kind::Binary:
        if (e.op == "+" || e.op == "-" || e.op == "*") return "(" + ring64(e.args[0]) + " " + e.op + " " + ring64(e.args[1]) + ")";
        break;
      default: break;
    }
    error(e.loc, "64-bit integer expression (WGSL has no 64-bit integers)");
    return "0u";
  }

  // An expression's value (check_wgsl has refused assignments, ++/-- and commas inside expressions).
  std::string ex(const Expr& e) {
    std::string buffer, offset;
    if (is64(e.type.scalar) && !e.type.pointer) return ring64(e);
    switch (e.kind) {
      case Expr::Kind::Var:
        if (e.type.pointer) {
          error(e.loc, "pointer '" + e.name + "' used as a value (only indexed, offset by += / -=, or viewed)");
          return "0";
        }
        return var_name(e.name);
      case Expr::Kind::Builtin: return builtin(e);
      case Expr::Kind::IntLit: return literal(e);
      case Expr::Kind::BoolLit: return e.ival ? "true" : "false";
      case Expr::Kind::FloatLit: return float_literal(e.fval);
      case Expr::Kind::Unary:
        if (e.op == "+") return ex(e.args[0]);
        if (e.op == "-" && e.args[0].type.scalar == Scalar::U32) return "(0u - " + ex(e.args[0]) + ")";  // WGSL: no unary - on u32
        if (e.op == "++" || e.op == "--") break;
        return "(" + e.op + ex(e.args[0]) + ")";
      case Expr::Kind::Postfix: break;
      case Expr::Kind::Binary: return binary(e);
      case Expr::Kind::Cond: return "select(" + bare(ex(e.args[2])) + ", " + bare(ex(e.args[1])) + ", " + bare(ex(e.args[0])) + ")";
      case Expr::Kind::Call: return call(e);
      case Expr::Kind::Index: return element(e);
      case Expr::Kind::Cast: return std::string(wgsl_type(e.type.scalar)) + "(" + bare(ex(e.args[0])) + ")";
      case Expr::Kind::Field:
        error(e.loc, "vector member '." + e.name + "' (GLSL only: Note [Vector types], glsl_support.cpp)");
        return "0";
      case Expr::Kind::Null:
        error(e.loc, "nullptr test of an optional buffer (GLSL only: Note [Optional buffers], glsl.cpp)");
        return "0";
    }
    error(e.loc, "'" + e.op + "' inside an expression (WGSL has assignments and ++/-- only as statements)");
    return "0";
  }

  // An element of a buffer or an array, as an lvalue.
  std::string element(const Expr& e) {
    std::string buffer, offset;
    const Expr& i = e.args[1];
    if (pointer_of(e.args[0], &buffer, &offset)) return buffer + "[" + (offset.empty() ? bare(ex(i)) : offset + " + " + as_uint(i)) + "]";
    if (e.args[0].kind == Expr::Kind::Var && e.args[0].type.array) return var_name(e.args[0].name) + "[" + bare(ex(i)) + "]";
    error(e.loc, "indexing something that is not a parameter's buffer, a view or an array");
    return "0";
  }

  std::string binary(const Expr& e) {
    const Expr &l = e.args[0], &r = e.args[1];
    if (is_assignment(e.op) || e.op == ",") {
      error(e.loc, "'" + e.op + "' inside an expression (WGSL has assignments only as statements)");
      return "0";
    }
    if (e.op == "<<" || e.op == ">>") return "(" + ex(l) + " " + e.op + " " + as_uint(r) + ")";  // WGSL: a u32 shift count
    return "(" + ex(l) + " " + e.op + " " + ex(r) + ")";
  }

  // An expression statement (also a for loop's init or update): an assignment, an increment, a call, or
  // `_ = value`; a comma splits into statements (not in a for loop's header).
  std::string simple(const Expr& e, bool header) {
    std::string buffer, offset;
    if (e.kind == Expr::Kind::Binary && e.op == ",") {
      if (header) return error(e.loc, "comma operator in a for loop's header"), "";
      return simple(e.args[0], false) + "\n" + indent() + simple(e.args[1], false);
    }
    if (e.kind == Expr::Kind::Postfix || (e.kind == Expr::Kind::Unary && (e.op == "++" || e.op == "--"))) {
      const Expr& v = e.args[0];
      if (pointer_of(v, &buffer, &offset)) return step(e, offset, e.op == "++" ? "+=" : "-=", "1u", header);
      if (v.type.scalar == Scalar::F32) return lvalue(v) + (e.op == "++" ? " += 1.0f" : " -= 1.0f") + (header ? "" : ";");
      return lvalue(v) + e.op + (header ? "" : ";");
    }
    if (e.kind == Expr::Kind::Binary && is_assignment(e.op)) {
      if (pointer_of(l_(e), &buffer, &offset)) {
        if (e.op == "+=" || e.op == "-=") return step(e, offset, e.op, as_uint(e.args[1]), header);
        return error(e.loc, "pointer arithmetic '" + e.op + "' outside p += n, p -= n and a view's initializer"), "";
      }
      const Expr &l = e.args[0], &r = e.args[1];
      std::string rhs = bare(ex(r));
      if (e.op == "<<=" || e.op == ">>=") {
        rhs = as_uint(r);
      } else if (e.op != "=" && l.type.scalar != r.type.scalar) {
        const bool ints = (l.type.scalar == Scalar::I32 || l.type.scalar == Scalar::U32) && (r.type.scalar == Scalar::I32 || r.type.scalar == Scalar::U32);
        if (!ints) return error(e.loc, "compound assignment '" + e.op + "' of " + r.type.c_name + " into " + l.type.c_name + " (write the conversion)"), "";
        // C divides in the common type, unsigned: `int x; x /= u` is not a signed division of x by i32(u).
        if ((e.op == "/=" || e.op == "%=") && l.type.scalar == Scalar::I32)
          return error(e.loc, "compound assignment '" + e.op + "' of " + r.type.c_name + " into " + l.type.c_name + " (C divides unsigned: write the conversion)"), "";
        rhs = std::string(wgsl_type(l.type.scalar)) + "(" + rhs + ")";
      }
      return lvalue(l) + " " + e.op + " " + rhs + (header ? "" : ";");
    }
    if (e.kind == Expr::Kind::Call && e.type.scalar == Scalar::Void) return ex(e) + (header ? "" : ";");
    return "_ = " + bare(ex(e)) + (header ? "" : ";");
  }
  static const Expr& l_(const Expr& e) { return e.args[0]; }

  std::string lvalue(const Expr& v) {
    if (v.kind == Expr::Kind::Var || v.kind == Expr::Kind::Index) return bare(ex(v));
    error(v.loc, "assignment to something that is not a variable or an element");
    return "decy_invalid";
  }

  std::string step(const Expr& e, const std::string& offset, const std::string& op, const std::string& n, bool header) {
    if (offset.empty()) error(e.loc, "pointer step of '" + e.args[0].name + "'");
    return offset + " " + op + " " + n + (header ? "" : ";");
  }

  // A local pointer: `T* v = p + n;` -> `var decy_off_v: u32 = <p's offset> + u32(n);`, v indexes p's buffer.
  std::string view(const VarDecl& d) {
    std::string buffer, offset;
    if (!pointer_arg(d.init, &buffer, &offset)) {
      error(d.loc, "pointer variable '" + d.name + "' that is not a parameter's buffer plus an offset");
      return "";
    }
    views_[d.name] = buffer;
    return "var decy_off_" + rename(d.name) + ": u32 = " + bare(offset) + ";";
  }

  std::string decl(const Stmt& s) {
    std::string out;
    for (const auto& d : s.decls) {
      if (d.shared) continue;  // a global (collect_shared)
      std::string one;
      if (d.type.pointer) {
        one = view(d);
      } else {
        const std::string t = d.type.array ? "array<" + std::string(wgsl_type(d.type.scalar)) + ", " + std::to_string(d.type.array) + ">"
                                           : wgsl_type(d.type.scalar);
        one = "var " + rename(d.name) + ": " + t + (d.has_init ? " = " + bare(ex(d.init)) : "") + ";";
      }
      out += (out.empty() ? "" : "\n" + indent()) + one;
    }
    return out;
  }

  std::string stmt(const Stmt& s) {
    const std::string in = indent();
    std::ostringstream o;
    switch (s.kind) {
      case Stmt::Kind::Block:
        o << in << "{\n";
        ++level_;
        for (const auto& b : s.body) o << stmt(b);
        --level_;
        o << in << "}\n";
        return o.str();
      case Stmt::Kind::Decl: {
        const std::string d = decl(s);
        return d.empty() ? "" : in + d + "\n";
      }
      case Stmt::Kind::Expr:
        if (s.exprs[0].kind == Expr::Kind::Call && s.exprs[0].name == "__syncthreads") return in + "storageBarrier();\n" + in + "workgroupBarrier();\n";
        return in + simple(s.exprs[0], false) + "\n";
      case Stmt::Kind::If:
        o << in << "if (" << bare(ex(s.exprs[0])) << ") " << nested(s.body[0]);
        if (s.body.size() > 1) o << in << "else " << nested(s.body[1]);
        return o.str();
      case Stmt::Kind::For: {
        std::string init;
        const Stmt& i = s.body[0];
        if (i.kind == Stmt::Kind::Decl) {
          init = decl(i);
          if (!init.empty() && init.back() == ';') init.pop_back();
        } else if (i.kind == Stmt::Kind::Expr) {
          init = simple(i.exprs[0], true);
        }
        const std::string cond = s.has_cond ? bare(ex(s.exprs[0])) : "";
        const std::string inc = simple(s.exprs[1], true);
        o << in << "for (" << init << "; " << cond << "; " << inc << ") " << nested(s.body[1]);
        return o.str();
      }
      case Stmt::Kind::While: return in + "while (" + bare(ex(s.exprs[0])) + ") " + nested(s.body[0]);
      case Stmt::Kind::Do: {  // the body in a block of its own: its locals are out of the continuing's scope, as in C
        o << in << "loop {\n";
        ++level_;
        o << indent() << nested(s.body[0]) << indent() << "continuing {\n" << indent() << "  break if !(" << bare(ex(s.exprs[0])) << ");\n"
          << indent() << "}\n";
        --level_;
        o << in << "}\n";
        return o.str();
      }
      case Stmt::Kind::Return: return in + "return" + (s.exprs.empty() ? "" : " " + bare(ex(s.exprs[0]))) + ";\n";
      case Stmt::Kind::Break: return in + "break;\n";
      case Stmt::Kind::Continue: return in + "continue;\n";
      case Stmt::Kind::Empty: return "";
    }
    return "";
  }

  // A branch or loop body, braced, starting after the header on its line.
  std::string nested(const Stmt& s) {
    std::ostringstream o;
    o << "{\n";
    ++level_;
    if (s.kind == Stmt::Kind::Block)
      for (const auto& b : s.body) o << stmt(b);
    else
      o << stmt(s);
    --level_;
    o << indent() << "}\n";
    return o.str();
  }

  const Checked& c_;
  const WgslOptions& o_;
  Wgsl& out_;
  std::map<std::string, std::uint32_t> buffers_;   // pointer parameter -> binding
  std::map<std::string, std::string> offsets_;     // pointer parameter it offsets -> offset variable
  std::map<std::string, std::string> views_;       // local pointer -> the buffer it points into
  std::vector<std::pair<VarDecl, std::string>> shared_;  // with their WGSL names
  std::map<std::string, std::string> shared_names_;      // "function/name" -> WGSL name
  std::map<std::string, bool> builtin_users_;            // helper -> uses_builtins
  std::string fn_;                                       // the function being emitted
  std::set<std::string> emitted_;
  std::vector<std::string> helper_texts_;
  int level_ = 0;
  bool sg_ = false;  // subgroups requested and used: the entry point and helpers pass decy_sgs, decy_sgid
  bool subgroup_ = false, shuffle_down_ = false;
};

}  // namespace

Wgsl emit_wgsl(const Checked& c, const std::string& source, const WgslOptions& options) {
  Wgsl out;
  out.errors = c.errors;
  if (c.kernel != nullptr && out.errors.empty()) out.errors = check_wgsl(c, {options.subgroups});
  if (c.kernel == nullptr || !out.errors.empty()) return out;
  Emitter e(c, options, out);
  out.text = e.run(source);
  if (!out.errors.empty()) out.text.clear();  // never a partial translation
  out.subgroups = out.text.find("enable subgroups;") != std::string::npos;
  return out;
}

}  // namespace decy
