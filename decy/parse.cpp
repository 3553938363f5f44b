// Parse: libclang's AST of a device-side CUDA parse -> decy's IR (ir.h). Operators are read from the tokens
// (libclang 14's C API does not expose them); constants (literals, -D knobs, sizeof, enum values) through
// clang_Cursor_Evaluate. Note [Unsupported constructs]: whatever the IR cannot hold is a diagnostic here;
// what it can hold but GLSL cannot express is judged by check.cpp.
#include "parse.h"

#include <clang-c/Index.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "builtins.h"
#include "lower.h"

namespace decy {
namespace {

std::string str(CXString s) {
  const char* c = clang_getCString(s);
  std::string r = c != nullptr ? c : "";
  clang_disposeString(s);
  return r;
}

std::vector<CXCursor> children(CXCursor c) {
  std::vector<CXCursor> out;
  clang_visitChildren(
      c, [](CXCursor k, CXCursor, CXClientData d) {
        static_cast<std::vector<CXCursor>*>(d)->push_back(k);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

// The children that are statements, expressions or declarations (type references and attributes dropped).
std::vector<CXCursor> operands(CXCursor c) {
  std::vector<CXCursor> out;
  for (CXCursor k : children(c)) {
    const CXCursorKind kind = clang_getCursorKind(k);
    if (clang_isExpression(kind) || clang_isStatement(kind) || clang_isDeclaration(kind)) out.push_back(k);
  }
  return out;
}

bool has_attr(CXCursor c, CXCursorKind attr) {
  for (CXCursor k : children(c))
    if (clang_getCursorKind(k) == attr) return true;
  return false;
}

unsigned offset_of(CXSourceLocation l) {
  unsigned off = 0;
  clang_getFileLocation(l, nullptr, nullptr, nullptr, &off);
  return off;
}

const std::set<std::string> kBinaryOps = {"+",  "-",  "*",  "/",  "%",  "<<", ">>", "<",  ">",  "<=", ">=",  "==",  "!=", "&", "|",
                                          "^",  "&&", "||", "=",  "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", ","};
// The builtins whose pointer parameters are out parameters: their `&x` arguments are passed as the lvalue x.
const std::set<std::string> kOutParams = {"sincosf", "__sincosf", "frexpf"};
// The atomics whose first argument, a pointer, is passed as the element it points to (GLSL's atomic* take it).
const std::set<std::string> kAtomics = {"atomicAdd", "atomicMax", "atomicMin", "atomicOr", "atomicAnd", "atomicXor", "atomicExch", "atomicCAS"};
const std::set<std::string> kPrefixOps = {"-", "+", "!", "~", "++", "--", "*", "&"};

// Note [Template kernels]: libclang shows a kernel template but not its explicit instantiations, and an
// instance's body only where something uses it. So the file is parsed with one line per instance appended
// (`static auto* const __decy_instance_<i> = &k<64, true>;`, after the last line: the file's own lines keep
// their numbers): the file's explicit instantiations (`template __global__ void k<64, true>(...);`, found
// by a pattern over the text) and those --kernel names. The address refers to the specialization, whose
// body libclang then has with the template arguments substituted (non-type and type parameters alike): a
// kernel named by instance_name() ("k_64_true"), `instance` keeping the text. A kernel template without
// any instance is listed as skipped.
constexpr const char* kInstanceVar = "__decy_instance_";

class Parser {
 public:
  Parser(Module& m, CXTranslationUnit tu, std::vector<std::string> instances) : m_(m), tu_(tu), instances_asked_(std::move(instances)) {}

  void top(CXCursor c) {
    for (CXCursor k : children(c)) {
      const CXCursorKind kind = clang_getCursorKind(k);
      if (clang_Location_isInSystemHeader(clang_getCursorLocation(k)) || loc(k).file == kBuiltinsPath) continue;
      // The main file and the project headers it includes (prelude.cuh's helpers are called by its kernels).
      if (kind == CXCursor_LinkageSpec || kind == CXCursor_UnexposedDecl || kind == CXCursor_Namespace) {  // extern "C": UnexposedDecl in libclang 14
        top(k);
      } else if (kind == CXCursor_FunctionDecl && clang_isCursorDefinition(k)) {
        function(k);
      } else if (kind == CXCursor_VarDecl && str(clang_getCursorSpelling(k)).starts_with(kInstanceVar)) {
        kernel_instance(k);
      } else if (kind == CXCursor_FunctionTemplate && clang_isCursorDefinition(k) && has_attr(k, CXCursor_CUDAGlobalAttr)) {
        Skipped s;
        s.name = str(clang_getCursorSpelling(k));
        s.why = diagnostic(loc(k).file, loc(k).line,
                           "template kernel without an instance (instantiate it explicitly in the file, or name one: --kernel '" + s.name + "<...>')");
        m_.skipped.push_back(std::move(s));
      }
    }
  }

  // A template with an instance is listed by its instances (Note [Template kernels]).
  void drop_instantiated_templates() {
    std::erase_if(m_.skipped, [&](const Skipped& s) {
      return std::any_of(m_.functions.begin(), m_.functions.end(), [&](const Function& f) { return f.kernel && f.instance.starts_with(s.name + "<"); });
    });
  }

 private:
  Loc loc(CXCursor c) const {
    CXFile f = nullptr;
    unsigned line = 0;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &line, nullptr, nullptr);
    return {f != nullptr ? str(clang_getFileName(f)) : m_.file, line};
  }

  void error(CXCursor c, std::string what) {
    const Loc l = loc(c);
    m_.diagnostics.push_back(diagnostic(l.file, l.line, std::move(what)));
  }

  Expr unsupported(CXCursor c, const std::string& what) {
    error(c, what);
    Expr e;
    e.loc = loc(c);
    return e;
  }

  Type type_of(CXType t) {
    Type r;
    r.c_name = str(clang_getTypeSpelling(t));
    const CXType ct = clang_getCanonicalType(t);
    switch (ct.kind) {
      case CXType_LValueReference: {
        const CXType pt = clang_getPointeeType(ct);
        Type in = type_of(pt);
        in.reference = true, in.is_const = clang_isConstQualifiedType(pt), in.c_name = r.c_name;
        if (in.pointer || in.array) in.scalar = Scalar::Unsupported;
        return in;
      }
      case CXType_Pointer: {
        const CXType pt = clang_getPointeeType(ct);
        Type in = type_of(pt);
        if (in.pointer || in.array || in.reference) in.scalar = Scalar::Unsupported;
        in.pointer = true, in.is_const = clang_isConstQualifiedType(pt), in.restrict_ = clang_isRestrictQualifiedType(ct);
        in.c_name = r.c_name;
        return in;
      }
      case CXType_IncompleteArray: {  // extern __shared__ T name[]: used as a T* (Note [Dynamic shared memory], glsl.cpp)
        Type in = type_of(clang_getArrayElementType(ct));
        if (in.pointer || in.array) in.scalar = Scalar::Unsupported;
        in.pointer = true, in.c_name = r.c_name;
        return in;
      }
      case CXType_ConstantArray: {
        Type in = type_of(clang_getArrayElementType(ct));
        if (in.pointer || in.array) in.scalar = Scalar::Unsupported;
        in.array = static_cast<std::uint64_t>(clang_getArraySize(ct)), in.c_name = r.c_name;
        return in;
      }
      case CXType_Void: r.scalar = Scalar::Void; break;
      case CXType_Bool: r.scalar = Scalar::Bool; break;
      case CXType_Int: r.scalar = Scalar::I32; break;
      case CXType_UInt: r.scalar = Scalar::U32; break;
      case CXType_Long:
      case CXType_LongLong: r.scalar = clang_Type_getSizeOf(ct) == 8 ? Scalar::I64 : Scalar::I32; break;
      case CXType_ULong:
      case CXType_ULongLong: r.scalar = clang_Type_getSizeOf(ct) == 8 ? Scalar::U64 : Scalar::U32; break;
      case CXType_Float: r.scalar = Scalar::F32; break;
      case CXType_UShort: r.scalar = Scalar::U16; break;
      case CXType_Short: r.scalar = Scalar::I16; break;
      case CXType_UChar:
      case CXType_Char_U: r.scalar = Scalar::U8; break;
      case CXType_SChar:
      case CXType_Char_S: r.scalar = Scalar::I8; break;
      case CXType_Double: r.scalar = Scalar::F64; break;
      case CXType_Record: {  // the vector types builtins.cpp declares (Note [Vector types], glsl_support.cpp)
        const std::string name = str(clang_getCursorSpelling(clang_getTypeDeclaration(ct)));
        static const std::pair<const char*, std::pair<Scalar, std::uint32_t>> kVectors[] = {
            {"float2", {Scalar::F32, 2}}, {"float4", {Scalar::F32, 4}}, {"int2", {Scalar::I32, 2}},
            {"int4", {Scalar::I32, 4}},   {"uint2", {Scalar::U32, 2}},  {"uint4", {Scalar::U32, 4}}};
        r.scalar = Scalar::Unsupported;
        for (const auto& [n, v] : kVectors)
          if (name == n) r.scalar = v.first, r.lanes = v.second;
        if (name == "__half" || name == "__nv_bfloat16" || name == "__half2") {  // Note [Half types] (glsl_support.cpp)
          r.scalar = name == "__half2" ? Scalar::U32 : Scalar::U16;
          r.half = name == "__half" ? Type::Half::F16 : name == "__half2" ? Type::Half::F16x2 : Type::Half::BF16;
          break;
        }
        if (r.lanes == 0 && (r.record = record(ct, name)) != nullptr) r.scalar = Scalar::Record;
        break;
      }
      default: r.scalar = Scalar::Unsupported; break;
    }
    return r;
  }

  // A struct whose fields are all 32- or 64-bit scalars (Note [Structs of scalars], glsl_support.cpp), or null.
  std::shared_ptr<const Record> record(CXType ct, const std::string& name) {
    if (auto it = records_.find(name); it != records_.end()) return it->second;
    auto r = std::make_shared<Record>();
    r->name = name, r->bytes = static_cast<std::uint32_t>(clang_Type_getSizeOf(ct));
    std::vector<CXCursor> fields;
    clang_Type_visitFields(
        ct, [](CXCursor f, CXClientData d) {
          static_cast<std::vector<CXCursor>*>(d)->push_back(f);
          return CXVisit_Continue;
        },
        &fields);
    bool ok = !fields.empty() && !name.empty() && !name.starts_with("__decy_");  // threadIdx's type: member() maps it
    for (CXCursor f : fields) {
      const Type t = type_of(clang_getCursorType(f));
      const bool scalar = t.scalar == Scalar::I32 || t.scalar == Scalar::U32 || t.scalar == Scalar::F32 || t.scalar == Scalar::I64 ||
                          t.scalar == Scalar::U64;
      ok = ok && scalar && !t.pointer && !t.array && t.lanes == 0;
      r->fields.emplace_back(str(clang_getCursorSpelling(f)), t.scalar);
    }
    if (!ok) r = nullptr;
    records_[name] = r;
    return r;
  }

  // A constant expression folded by clang (literals, -D knobs, sizeof, enum values), or nothing.
  std::optional<Expr> constant(CXCursor c) {
    CXEvalResult r = clang_Cursor_Evaluate(c);
    if (r == nullptr) return std::nullopt;
    Expr e;
    e.loc = loc(c), e.type = type_of(clang_getCursorType(c));
    std::optional<Expr> out;
    const CXEvalResultKind kind = clang_EvalResult_getKind(r);
    if (!e.type.pointer && !e.type.array && (kind == CXEval_Int || kind == CXEval_Float)) {
      const bool f = kind == CXEval_Float;
      const double d = f ? clang_EvalResult_getAsDouble(r) : 0.0;
      std::uint64_t i = 0;
      if (!f) i = clang_EvalResult_isUnsignedInt(r) ? clang_EvalResult_getAsUnsigned(r) : static_cast<std::uint64_t>(clang_EvalResult_getAsLongLong(r));
      if (e.type.scalar == Scalar::F32 || e.type.scalar == Scalar::F64) {
        e.kind = Expr::Kind::FloatLit, e.fval = f ? d : static_cast<double>(static_cast<std::int64_t>(i));
      } else if (e.type.scalar == Scalar::Bool) {
        e.kind = Expr::Kind::BoolLit, e.ival = f ? d != 0 : i != 0;
      } else if (!f) {
        e.kind = Expr::Kind::IntLit, e.ival = i;
      }
      if (e.kind != Expr::Kind::IntLit || !f) out = e;
    }
    clang_EvalResult_dispose(r);
    return out;
  }

  std::vector<std::string> tokens(CXCursor c) {
    CXToken* toks = nullptr;
    unsigned n = 0;
    clang_tokenize(tu_, clang_getCursorExtent(c), &toks, &n);
    std::vector<std::string> out;
    for (unsigned i = 0; i < n; ++i) out.push_back(str(clang_getTokenSpelling(tu_, toks[i])));
    clang_disposeTokens(tu_, toks, n);
    return out;
  }

  // The operator token of a binary expression: the first token after its left operand.
  std::string binary_operator(CXCursor c, CXCursor lhs) {
    const unsigned lhs_end = offset_of(clang_getRangeEnd(clang_getCursorExtent(lhs)));
    CXToken* toks = nullptr;
    unsigned n = 0;
    clang_tokenize(tu_, clang_getCursorExtent(c), &toks, &n);
    std::string op;
    for (unsigned i = 0; i < n; ++i) {
      if (offset_of(clang_getTokenLocation(tu_, toks[i])) < lhs_end) continue;
      if (clang_getTokenKind(toks[i]) == CXToken_Punctuation) op = str(clang_getTokenSpelling(tu_, toks[i]));
      break;
    }
    clang_disposeTokens(tu_, toks, n);
    return kBinaryOps.contains(op) ? op : "";
  }

  // An implicit conversion (libclang's UnexposedExpr over one operand) to `to`.
  Expr convert(Expr in, const Type& to) {
    if (in.type.pointer && !to.pointer && !to.array && to.scalar == Scalar::Bool) {  // if (p): p != nullptr
      Expr null;
      null.kind = Expr::Kind::Null, null.type = in.type, null.loc = in.loc;
      Expr e;
      e.kind = Expr::Kind::Binary, e.op = "!=", e.type = to, e.loc = in.loc;
      e.args.push_back(std::move(in)), e.args.push_back(std::move(null));
      return e;
    }
    if (to.pointer || to.array || in.type.pointer || in.type.array || to.scalar == in.type.scalar) return in;
    if (in.kind == Expr::Kind::FloatLit && (to.scalar == Scalar::F32 || to.scalar == Scalar::F64)) {
      in.type = to;
      return in;
    }
    const auto integer = [](Scalar s) { return s == Scalar::I32 || s == Scalar::U32 || s == Scalar::I64 || s == Scalar::U64; };
    if (in.kind == Expr::Kind::IntLit && integer(in.type.scalar) && integer(to.scalar)) {  // a literal converted in place
      if (to.scalar == Scalar::U32) in.ival &= 0xffffffffu;
      if (to.scalar == Scalar::I32) in.ival = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(in.ival)));
      if (in.type.scalar == Scalar::U32 && to.scalar == Scalar::I64) in.ival &= 0xffffffffu;
      in.type = to;
      return in;
    }
    Expr e;
    e.kind = Expr::Kind::Cast, e.type = to, e.loc = in.loc;
    e.args.push_back(std::move(in));
    return e;
  }

  static CXCursor strip(CXCursor c) {
    while (clang_getCursorKind(c) == CXCursor_UnexposedExpr || clang_getCursorKind(c) == CXCursor_ParenExpr) {
      const auto ops = operands(c);
      if (ops.size() != 1) break;
      c = ops[0];
    }
    return c;
  }

  Expr decl_ref(CXCursor c) {
    const CXCursor d = clang_getCursorReferenced(c);
    const CXCursorKind dk = clang_getCursorKind(d);
    const std::string name = str(clang_getCursorSpelling(c));
    if (auto it = closure_vars_.find(name); it != closure_vars_.end() && closure_of(clang_getCursorType(d)) != nullptr)
      return closure_pack(c, *closure_of(clang_getCursorType(d)), it->second);
    if (is_local(d)) {
      Expr e;
      e.kind = Expr::Kind::Var, e.name = name, e.loc = loc(c), e.type = type_of(clang_getCursorType(c));
      return e;
    }
    if (name == "warpSize") {
      Expr e;
      e.kind = Expr::Kind::Builtin, e.name = "int(gl_SubgroupSize)", e.loc = loc(c), e.type.scalar = Scalar::I32;
      return e;
    }
    if (auto k = constant(c)) return *k;
    if (name == "threadIdx" || name == "blockIdx" || name == "blockDim" || name == "gridDim")
      return unsupported(c, "'" + name + "' used without .x/.y/.z");
    if (dk == CXCursor_FunctionDecl) return unsupported(c, "function '" + name + "' used as a value");
    return unsupported(c, "global variable '" + name + "' (__device__/__constant__ globals are not in the subset)");
  }

  // reinterpret_cast (or a C cast) of a pointer: to another pointer (a view of the same buffer with another
  // element type: Note [Vector types], glsl_support.cpp), or to an integer (the address: alignment tests).
  Expr reinterpret(CXCursor c, Expr in, const Type& to) {
    if (!in.type.pointer) return unsupported(c, "reinterpret_cast of a value that is not a pointer");
    if (!to.pointer && (to.scalar != Scalar::U64 && to.scalar != Scalar::I64 && to.scalar != Scalar::U32))
      return unsupported(c, "reinterpret_cast of a pointer to '" + to.c_name + "'");
    Expr e;
    e.kind = Expr::Kind::Cast, e.type = to, e.loc = loc(c);
    e.args.push_back(std::move(in));
    return e;
  }

  Expr member(CXCursor c) {
    const auto ops = operands(c);
    const std::string field = str(clang_getCursorSpelling(c));
    if (ops.size() == 1) {
      if (const Type bt = type_of(clang_getCursorType(ops[0]));
          (bt.lanes != 0 && !bt.pointer && field.size() == 1 && std::string("xyzw").find(field) < bt.lanes) ||
          (bt.record != nullptr && !bt.pointer)) {  // `p->f` has a pointer base: refused below
        Expr e;
        e.kind = Expr::Kind::Field, e.name = field, e.loc = loc(c), e.type = type_of(clang_getCursorType(c));
        e.args.push_back(expr(ops[0]));
        return e;
      }
      const CXCursor base = strip(ops[0]);
      const std::string name = str(clang_getCursorSpelling(base));
      static const std::pair<const char*, const char*> kIndex[] = {
          {"threadIdx", "gl_LocalInvocationID"}, {"blockIdx", "gl_WorkGroupID"}, {"blockDim", "gl_WorkGroupSize"}, {"gridDim", "gl_NumWorkGroups"}};
      for (const auto& [cuda, glsl] : kIndex)
        if (clang_getCursorKind(base) == CXCursor_DeclRefExpr && name == cuda && (field == "x" || field == "y" || field == "z")) {
          Expr e;
          e.kind = Expr::Kind::Builtin, e.name = std::string(glsl) + "." + field, e.loc = loc(c), e.type.scalar = Scalar::U32;
          return e;
        }
    }
    return unsupported(c, "member access '." + field + "' (structs are not in the subset)");
  }

  Expr call(CXCursor c) {
    const CXCursor callee = clang_getCursorReferenced(c);
    Expr e;
    e.kind = Expr::Kind::Call, e.loc = loc(c), e.type = type_of(clang_getCursorType(c));
    const bool value_type = e.type.lanes != 0 || e.type.half != Type::Half::None;  // vectors and halves: copies are values
    if (!clang_Cursor_isNull(callee) && clang_getCursorKind(callee) == CXCursor_Constructor && value_type) {
      const auto ops = operands(c);  // a vector's copy (`const float4 v = x4[i];`): the value
      if (ops.size() == 1) return convert(expr(ops[0]), e.type);
    }
    if (!clang_Cursor_isNull(callee) && clang_getCursorKind(callee) == CXCursor_CXXMethod && value_type &&
        str(clang_getCursorSpelling(callee)) == "operator=" && clang_Cursor_getNumArguments(c) == 2) {  // a vector's assignment
      Expr lhs = expr(clang_Cursor_getArgument(c, 0)), rhs = expr(clang_Cursor_getArgument(c, 1));
      return node(Expr::Kind::Binary, c, "=", {std::move(lhs), std::move(rhs)});
    }
    if (!clang_Cursor_isNull(callee) && clang_getCursorKind(callee) == CXCursor_Constructor && closure_of(clang_getCursorType(c)) != nullptr) {
      const auto ops = operands(c);  // a closure's copy: its captured values
      if (ops.size() == 1) return expr(ops[0]);
    }
    if (!clang_Cursor_isNull(callee) && clang_getCursorKind(callee) == CXCursor_CXXMethod && str(clang_getCursorSpelling(callee)) == "operator()")
      return closure_call(c);
    if (clang_Cursor_isNull(callee) || clang_getCursorKind(callee) != CXCursor_FunctionDecl)
      return unsupported(c, "call of something that is not a named function");
    e.name = str(clang_getCursorSpelling(callee));
    const int n = clang_Cursor_getNumArguments(c);
    for (int i = 0; i < n; ++i) {
      const CXCursor a = clang_Cursor_getArgument(c, static_cast<unsigned>(i));
      if (clang_getCursorKind(a) == CXCursor_UnexposedExpr && operands(a).empty()) {  // a default argument
        if (auto k = constant(a)) {
          e.args.push_back(*k);
          continue;
        }
      }
      if (i == 0 && kAtomics.contains(e.name) && clang_getCursorType(a).kind == CXType_Pointer) {  // atomicMax(p, v): *p, an lvalue
        const CXCursor u = strip(a);
        if (clang_getCursorKind(u) == CXCursor_UnaryOperator && !tokens(u).empty() && tokens(u).front() == "&") {  // &x[i], &shared_var: that lvalue
          e.args.push_back(expr(operands(u).at(0)));
          continue;
        }
        Expr p = expr(a), zero;
        zero.kind = Expr::Kind::IntLit, zero.type.scalar = Scalar::I32, zero.loc = p.loc;
        Expr at;
        at.kind = Expr::Kind::Index, at.loc = p.loc, at.type = p.type, at.type.pointer = false, at.type.is_const = false;
        at.args.push_back(std::move(p)), at.args.push_back(zero);
        e.args.push_back(std::move(at));
        continue;
      }
      if (kOutParams.contains(e.name) && clang_getCursorType(a).kind == CXType_Pointer) {  // sincosf(x, &s, &c): s, c
        const CXCursor u = strip(a);
        const auto t = tokens(u);
        if (clang_getCursorKind(u) != CXCursor_UnaryOperator || t.empty() || t.front() != "&") {
          e.args.push_back(unsupported(a, "pointer argument of '" + e.name + "' that is not '&variable' or '&array[i]'"));
          continue;
        }
        e.args.push_back(expr(operands(u).at(0)));
        continue;
      }
      push_arg(e.args, expr(a));
    }
    // After the arguments: a lambda argument's class is known by then (the instance's parameter type).
    if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(callee))) e.name = instance(callee);
    note_call(e.name);
    return e;
  }

  void note_call(const std::string& name) {
    if (current_ != nullptr && std::find(current_->calls.begin(), current_->calls.end(), name) == current_->calls.end())
      current_->calls.push_back(name);
  }

  // An argument; a closure passes its captured values (Note [Lambdas and template helpers]).
  static void push_arg(std::vector<Expr>& args, Expr a) {
    if (a.kind == Expr::Kind::Call && a.name.starts_with(kClosurePack)) {
      for (auto& v : a.args) args.push_back(std::move(v));
      return;
    }
    args.push_back(std::move(a));
  }

  Expr node(Expr::Kind kind, CXCursor c, std::string op, std::vector<Expr> args) {
    Expr e;
    e.kind = kind, e.op = std::move(op), e.args = std::move(args), e.loc = loc(c), e.type = type_of(clang_getCursorType(c));
    return e;
  }

  Expr expr(CXCursor c) {
    const CXCursorKind kind = clang_getCursorKind(c);
    const auto ops = operands(c);
    switch (kind) {
      case CXCursor_IntegerLiteral:
      case CXCursor_FloatingLiteral:
      case CXCursor_CXXBoolLiteralExpr:
      case CXCursor_UnaryExpr:  // sizeof, alignof
        if (auto k = constant(c)) return *k;
        return unsupported(c, "expression '" + str(clang_getCursorKindSpelling(kind)) + "' that is not a constant");
      case CXCursor_ParenExpr:
        return expr(ops.at(0));
      case CXCursor_UnexposedExpr:
        if (ops.size() == 1) return convert(expr(ops[0]), type_of(clang_getCursorType(c)));
        if (auto k = constant(c)) return *k;
        return unsupported(c, "an unexposed expression");
      case CXCursor_CStyleCastExpr:
      case CXCursor_CXXStaticCastExpr:
      case CXCursor_CXXFunctionalCastExpr: {
        if (ops.empty()) return unsupported(c, "an empty cast");
        Expr in = expr(ops.back());
        const Type to = type_of(clang_getCursorType(c));
        if (to.pointer || in.type.pointer) {
          if (kind == CXCursor_CStyleCastExpr) return reinterpret(c, std::move(in), to);
          return unsupported(c, "a pointer cast");
        }
        return convert(std::move(in), to);
      }
      case CXCursor_InitListExpr: {  // T{x} or T{} of a scalar (u16{0}); aggregates are not in the subset
        const Type t = type_of(clang_getCursorType(c));
        if (t.pointer || t.array || ops.size() > 1) return unsupported(c, "an initializer list of '" + t.c_name + "'");
        if (ops.size() == 1) return convert(expr(ops[0]), t);
        Expr zero;
        zero.kind = Expr::Kind::IntLit, zero.type.scalar = Scalar::I32, zero.loc = loc(c);
        return convert(zero, t);
      }
      case CXCursor_CXXReinterpretCastExpr:
        if (ops.empty()) return unsupported(c, "an empty cast");
        return reinterpret(c, expr(ops.back()), type_of(clang_getCursorType(c)));
      case CXCursor_CXXConstCastExpr:
        return unsupported(c, "const_cast");
      case CXCursor_CXXNullPtrLiteralExpr: {  // only `p == nullptr` / `p != nullptr` (Note [Optional buffers], glsl.cpp)
        Expr e;
        e.kind = Expr::Kind::Null, e.loc = loc(c), e.type.pointer = true, e.type.c_name = "nullptr";
        return e;
      }
      case CXCursor_DeclRefExpr:
        return decl_ref(c);
      case CXCursor_MemberRefExpr:
        return member(c);
      case CXCursor_ArraySubscriptExpr:
        return node(Expr::Kind::Index, c, "", {expr(ops.at(0)), expr(ops.at(1))});
      case CXCursor_CallExpr:
        return call(c);
      case CXCursor_BinaryOperator:
      case CXCursor_CompoundAssignOperator: {
        if (auto k = constant(c)) return *k;
        if (ops.size() != 2) return unsupported(c, "a binary operator without two operands");
        const std::string op = binary_operator(c, ops[0]);
        if (op.empty()) return unsupported(c, "a binary operator decy cannot read (inside a macro expansion?)");
        return node(Expr::Kind::Binary, c, op, {expr(ops[0]), expr(ops[1])});
      }
      case CXCursor_UnaryOperator: {
        if (auto k = constant(c)) return *k;
        const auto t = tokens(c);
        if (ops.size() != 1 || t.empty()) return unsupported(c, "a unary operator decy cannot read");
        if (kPrefixOps.contains(t.front())) {
          if (t.front() == "&") return unsupported(c, "address-of '&' (pointers to locals are not in the subset)");
          Expr in = expr(ops[0]);
          if (t.front() == "*") {  // *p -> p[0]
            Expr zero;
            zero.kind = Expr::Kind::IntLit, zero.type.scalar = Scalar::I32, zero.loc = in.loc;
            return node(Expr::Kind::Index, c, "", {std::move(in), zero});
          }
          return node(Expr::Kind::Unary, c, t.front(), {std::move(in)});
        }
        if (t.back() == "++" || t.back() == "--") return node(Expr::Kind::Postfix, c, t.back(), {expr(ops[0])});
        return unsupported(c, "a unary operator decy cannot read (inside a macro expansion?)");
      }
      case CXCursor_LambdaExpr:
        return lambda(c);
      case CXCursor_ConditionalOperator:
        if (auto k = constant(c)) return *k;
        return node(Expr::Kind::Cond, c, "", {expr(ops.at(0)), expr(ops.at(1)), expr(ops.at(2))});
      default:
        return unsupported(c, "expression '" + str(clang_getCursorKindSpelling(kind)) + "'");
    }
  }

  VarDecl var(CXCursor c) {
    VarDecl v;
    v.name = str(clang_getCursorSpelling(c)), v.type = type_of(clang_getCursorType(c)), v.loc = loc(c);
    v.shared = has_attr(c, CXCursor_CUDASharedAttr);
    if (clang_Cursor_getStorageClass(c) == CX_SC_Extern) {  // Note [Dynamic shared memory] (glsl.cpp)
      const CXType t = clang_getCanonicalType(clang_getCursorType(c));
      const Type& elem = v.type;  // T* (type_of)
      const bool word = t.kind == CXType_IncompleteArray && elem.lanes == 0 && elem.record == nullptr &&
                        (elem.scalar == Scalar::F32 || elem.scalar == Scalar::I32 || elem.scalar == Scalar::U32);
      if (!v.shared || !word) {
        error(c, "extern '" + v.name + "' of type '" + v.type.c_name + "' (only extern __shared__ arrays of float, int or unsigned: dynamic shared memory)");
        return v;
      }
      v.dynamic = true;
      return v;
    }
    if (clang_Cursor_getStorageClass(c) == CX_SC_Static && !v.shared) error(c, "static local variable '" + v.name + "'");
    // An array's expression children are its size (libclang 14 has no clang_Cursor_getVarDeclInitializer);
    // a scalar's last one is its initializer.
    for (CXCursor k : operands(c)) {
      if (!clang_isExpression(clang_getCursorKind(k))) continue;
      if (v.type.lanes != 0 && clang_getCursorKind(k) == CXCursor_CallExpr && operands(k).empty() &&
          clang_getCursorKind(clang_getCursorReferenced(k)) == CXCursor_Constructor)
        continue;  // `uint2 v;`: default-initialized (indeterminate in C++), no initializer
      if (clang_getCursorKind(k) == CXCursor_InitListExpr) {
        if (!array_init(k, v)) error(k, "initializer list of '" + v.name + "'");
        continue;
      }
      if (!v.type.array) v.init = convert(expr(k), v.type), v.has_init = true;
    }
    if (const Closure* k = closure_of(clang_getCursorType(c)); k != nullptr && v.has_init && v.init.name.starts_with(kClosurePack)) {
      closure_vars_[v.name] = v.init.args;  // `auto f = [..](..){..};`: no GLSL variable, f's calls take the values
      v.closure = true;
    }
    return v;
  }

  // `T a[N] = {x, y, ...}` of scalars or vectors: a call of __decy_array (GLSL's T[N](...)), the elements
  // left out zero as in C. Nested braces (structs, arrays of arrays) are refused by the caller.
  bool array_init(CXCursor list, VarDecl& v) {
    const auto items = operands(list);
    if (!v.type.array || v.type.pointer || v.type.record != nullptr || items.size() > v.type.array) return false;
    Type elem = v.type;
    elem.array = 0;
    Expr e;
    e.kind = Expr::Kind::Call, e.name = kArrayInit, e.type = v.type, e.loc = loc(list);
    for (CXCursor k : items) {
      if (clang_getCursorKind(k) == CXCursor_InitListExpr) return false;
      e.args.push_back(convert(expr(k), elem));
    }
    Expr zero;
    zero.kind = Expr::Kind::IntLit, zero.type.scalar = Scalar::I32, zero.loc = e.loc;
    while (e.args.size() < v.type.array) {
      if (elem.lanes != 0) return false;  // a vector's zero: not needed yet
      e.args.push_back(convert(zero, elem));
    }
    v.init = std::move(e), v.has_init = true;
    return true;
  }

  Stmt stmt(CXCursor c) {
    Stmt s;
    s.loc = loc(c);
    const CXCursorKind kind = clang_getCursorKind(c);
    const auto ops = operands(c);
    switch (kind) {
      case CXCursor_CompoundStmt:
        s.kind = Stmt::Kind::Block;
        for (CXCursor k : ops) s.body.push_back(stmt(k));
        break;
      case CXCursor_DeclStmt:
        s.kind = Stmt::Kind::Decl;
        for (CXCursor k : ops) {
          if (clang_getCursorKind(k) == CXCursor_VarDecl) {
            VarDecl v = var(k);
            if (!v.closure) s.decls.push_back(std::move(v));
          }
          else error(k, "local declaration '" + str(clang_getCursorKindSpelling(clang_getCursorKind(k))) + "'");
        }
        break;
      case CXCursor_IfStmt:
        if (ops.size() < 2 || clang_getCursorKind(ops[0]) == CXCursor_VarDecl) {
          error(c, "an if with a declaration in its condition");
          break;
        }
        s.kind = Stmt::Kind::If;
        s.exprs.push_back(expr(ops[0]));
        for (std::size_t i = 1; i < ops.size(); ++i) s.body.push_back(stmt(ops[i]));
        break;
      case CXCursor_ForStmt:
        if (const auto t = tokens(c); ops.size() == 3 && t.size() > 2 && t[2] == ";") {  // for (; c; inc): no init
          s.kind = Stmt::Kind::For;
          s.body.emplace_back();
          s.exprs.push_back(expr(ops[0]));
          s.exprs.push_back(expr(ops[1]));
          s.body.push_back(stmt(ops[2]));
          break;
        }
        if (ops.size() != 4) {
          error(c, "a for loop with an empty init, condition or increment (write it as a while loop)");
          break;
        }
        s.kind = Stmt::Kind::For;
        s.body.push_back(stmt(ops[0]));
        s.exprs.push_back(expr(ops[1]));
        s.exprs.push_back(expr(ops[2]));
        s.body.push_back(stmt(ops[3]));
        break;
      case CXCursor_WhileStmt:
        s.kind = Stmt::Kind::While;
        s.exprs.push_back(expr(ops.at(0)));
        s.body.push_back(stmt(ops.at(1)));
        break;
      case CXCursor_DoStmt:
        s.kind = Stmt::Kind::Do;
        s.body.push_back(stmt(ops.at(0)));
        s.exprs.push_back(expr(ops.at(1)));
        break;
      case CXCursor_ReturnStmt:
        s.kind = Stmt::Kind::Return;
        if (!ops.empty()) s.exprs.push_back(expr(ops[0]));
        break;
      case CXCursor_BreakStmt: s.kind = Stmt::Kind::Break; break;
      case CXCursor_ContinueStmt: s.kind = Stmt::Kind::Continue; break;
      case CXCursor_NullStmt: break;
      case CXCursor_UnexposedStmt:  // libclang 14's AttributedStmt: `#pragma unroll` before a loop (a hint: dropped)
        if (ops.size() == 1 && clang_isStatement(clang_getCursorKind(ops[0]))) return stmt(ops[0]);
        error(c, "statement 'UnexposedStmt'");
        break;
      case CXCursor_GotoStmt: error(c, "goto"); break;
      case CXCursor_LabelStmt: error(c, "a label (goto target)"); break;
      case CXCursor_SwitchStmt: return switch_stmt(c, ops);
      case CXCursor_GCCAsmStmt: return asm_stmt(c, ops);
      default:
        if (clang_isExpression(kind)) {
          s.kind = Stmt::Kind::Expr;
          s.exprs.push_back(expr(c));
        } else {
          error(c, "statement '" + str(clang_getCursorKindSpelling(kind)) + "'");
        }
    }
    return s;
  }

  // A switch: its case groups collected here, lowered to an if/else chain by lower_switch (lower.cpp).
  Stmt switch_stmt(CXCursor c, const std::vector<CXCursor>& ops) {
    if (ops.size() != 2 || clang_getCursorKind(ops[1]) != CXCursor_CompoundStmt) {
      error(c, "a switch decy cannot read (a declaration in its condition?)");
      return {};
    }
    Expr cond = expr(ops[0]);
    std::vector<CaseGroup> groups;
    for (CXCursor k : operands(ops[1])) {
      while (clang_getCursorKind(k) == CXCursor_CaseStmt || clang_getCursorKind(k) == CXCursor_DefaultStmt) {
        if (groups.empty() || !groups.back().body.empty()) groups.push_back({{}, false, {}, loc(k)});
        const auto parts = operands(k);
        if (parts.empty()) break;
        if (clang_getCursorKind(k) == CXCursor_CaseStmt) groups.back().values.push_back(convert(expr(parts.front()), cond.type));
        else groups.back().is_default = true;
        k = parts.back();
      }
      if (groups.empty()) {
        error(k, "a statement before the first case of a switch");
        return {};
      }
      groups.back().body.push_back(stmt(k));
    }
    return lower_switch(std::move(cond), std::move(groups), loc(c), m_.diagnostics);
  }

  // Note [PTX idioms]: the few inline-asm statements with a GLSL meaning (the prelude's f16 conversions)
  // become assignments from decy builtins; any other asm is a diagnostic quoting it.
  Stmt asm_stmt(CXCursor c, const std::vector<CXCursor>& ops) {
    Stmt s;
    s.loc = loc(c);
    std::string text;
    CXToken* toks = nullptr;
    unsigned n = 0;
    clang_tokenize(tu_, clang_getCursorExtent(c), &toks, &n);
    for (unsigned i = 0; i < n; ++i) {
      const std::string t = str(clang_getTokenSpelling(tu_, toks[i]));
      if (t == ":") break;
      if (clang_getTokenKind(toks[i]) == CXToken_Literal && t.size() >= 2 && t.front() == '"') text += t.substr(1, t.size() - 2);
    }
    clang_disposeTokens(tu_, toks, n);
    static const std::pair<const char*, const char*> kIdioms[] = {{"cvt.f32.f16 %0, %1;", "__decy_f16_to_f32"},
                                                                  {"cvt.rn.f16.f32 %0, %1;", "__decy_f32_to_f16"}};
    for (const auto& [ptx, builtin] : kIdioms) {
      if (text != ptx || ops.size() != 2) continue;
      Expr out = expr(ops[0]), in = expr(ops[1]), call;
      call.kind = Expr::Kind::Call, call.name = builtin, call.loc = s.loc, call.type.scalar = out.type.scalar;
      call.args.push_back(std::move(in));
      Expr assign;
      assign.kind = Expr::Kind::Binary, assign.op = "=", assign.type = out.type, assign.loc = s.loc;
      assign.args.push_back(std::move(out)), assign.args.push_back(std::move(call));
      s.kind = Stmt::Kind::Expr;
      s.exprs.push_back(std::move(assign));
      return s;
    }
    error(c, "inline PTX asm \"" + text + "\"");
    return s;
  }

  // `static auto* const __decy_instance_<i> = &k<...>;`: the specialization it refers to, as a kernel.
  void kernel_instance(CXCursor var) {
    const std::size_t i = std::stoul(str(clang_getCursorSpelling(var)).substr(std::string(kInstanceVar).size()));
    CXCursor target = clang_getNullCursor();
    std::function<void(CXCursor)> find = [&](CXCursor k) {
      if (clang_getCursorKind(k) == CXCursor_DeclRefExpr) target = clang_getCursorReferenced(k);
      for (CXCursor kid : children(k)) find(kid);
    };
    find(var);
    const std::string written = i < instances_asked_.size() ? instances_asked_[i] : "";
    if (clang_Cursor_isNull(target) || clang_getCursorKind(target) != CXCursor_FunctionDecl || !has_attr(target, CXCursor_CUDAGlobalAttr))
      return;  // not a kernel's instance: libclang's error names it (parse())
    Function f;
    f.name = instance_name(written), f.instance = written, f.kernel = true;
    f.ret = type_of(clang_getResultType(clang_getCursorType(target)));
    std::vector<CXCursor> params;
    for (int a = 0; a < clang_Cursor_getNumArguments(target); ++a) params.push_back(clang_Cursor_getArgument(target, static_cast<unsigned>(a)));
    body(target, f, params, {});
  }

  void function(CXCursor c) {
    const bool kernel = has_attr(c, CXCursor_CUDAGlobalAttr);
    if (!kernel && !has_attr(c, CXCursor_CUDADeviceAttr)) return;  // host code
    Function f;
    f.name = str(clang_getCursorSpelling(c)), f.kernel = kernel;
    f.ret = type_of(clang_getResultType(clang_getCursorType(c)));
    std::vector<CXCursor> params;
    for (int i = 0; i < clang_Cursor_getNumArguments(c); ++i) params.push_back(clang_Cursor_getArgument(c, static_cast<unsigned>(i)));
    body(c, f, params, {});
  }

  // f's parameters and body (c's CompoundStmt child); a closure parameter becomes its captured values
  // (Note [Lambdas and template helpers]). Parsed with closure_vars_ and current_ of its own, so a template
  // instance or lambda met inside another function's body is parsed on the spot.
  void body(CXCursor c, Function& f, const std::vector<CXCursor>& params, std::map<std::string, std::vector<Expr>> closures) {
    f.loc = loc(c);
    unsigned end = 0;
    clang_getExpansionLocation(clang_getRangeEnd(clang_getCursorExtent(c)), nullptr, &end, nullptr, nullptr);
    f.end_line = end;
    for (CXCursor p : params) {
      const std::string name = str(clang_getCursorSpelling(p));
      if (const Closure* k = closure_of(clang_getCursorType(p))) {
        closures[name] = closure_params(f, name, *k, loc(p));
        continue;
      }
      f.params.push_back({name, type_of(clang_getCursorType(p)), loc(p)});
    }
    Function* outer = current_;
    auto outer_closures = std::move(closure_vars_);
    closure_vars_ = std::move(closures);
    current_ = &f;
    try {
      for (CXCursor k : children(c))
        if (clang_getCursorKind(k) == CXCursor_CompoundStmt) f.body = stmt(k);
    } catch (const std::exception& e) {  // an AST shape decy did not expect (ops.at): this function only
      error(c, std::string("decy could not read this function (") + e.what() + ")");
    }
    current_ = outer;
    closure_vars_ = std::move(outer_closures);
    m_.functions.push_back(std::move(f));
  }

  // Note [Lambdas and template helpers]
  // GLSL and WGSL have neither templates nor closures. A call of a function template's instance is a call of
  // a helper parsed from the instance libclang hands over (its body with the template arguments substituted)
  // and named <template>_inst<N>. A lambda becomes a helper lambda_<line>_<N> whose parameters are the
  // values it captures (the locals and parameters its body names from outside, in order of appearance) and
  // then its own; a closure passed on (a template's `Load load`) travels as those captured values, flattened
  // when a closure captures another (`decode` inside each_element's default decode8), and a call `load(i)`
  // calls the lambda's helper with them. Captures are read as values: a lambda that assigns to a capture
  // is refused (CUDA would change the caller's variable). Each instance and lambda class is parsed once.
  struct Closure {
    std::string helper;                                // the lambda's GLSL helper
    std::vector<std::pair<std::string, Type>> leaves;  // its captured values, nested closures flattened
  };

  const Closure* closure_of(CXType t) {
    const CXType ct = clang_getCanonicalType(t.kind == CXType_LValueReference ? clang_getPointeeType(t) : t);
    if (ct.kind != CXType_Record) return nullptr;
    auto it = closures_.find(clang_getTypeDeclaration(ct).data[0]);  // the class: `const` closures too
    return it != closures_.end() ? &it->second : nullptr;
  }

  Expr closure_pack(CXCursor c, const Closure& k, std::vector<Expr> values) {
    Expr e;
    e.kind = Expr::Kind::Call, e.name = kClosurePack + k.helper, e.loc = loc(c), e.args = std::move(values);
    e.type.scalar = Scalar::Unsupported, e.type.c_name = "a lambda";
    return e;
  }

  std::vector<Expr> closure_params(Function& f, const std::string& name, const Closure& k, const Loc& l) {
    std::vector<Expr> values;
    for (const auto& [leaf, t] : k.leaves) {
      Expr v;
      v.kind = Expr::Kind::Var, v.name = name + "_cap_" + leaf, v.type = t, v.loc = l;
      f.params.push_back({v.name, t, l});
      values.push_back(std::move(v));
    }
    return values;
  }

  static bool is_local(CXCursor d) {
    const CXCursorKind dk = clang_getCursorKind(d), parent = clang_getCursorKind(clang_getCursorSemanticParent(d));
    if (dk == CXCursor_VarDecl && clang_Cursor_getStorageClass(d) == CX_SC_Extern && has_attr(d, CXCursor_CUDASharedAttr))
      return true;  // extern __shared__ in a function: its semantic parent is the file (Note [Dynamic shared memory], glsl.cpp)
    return dk == CXCursor_ParmDecl || (dk == CXCursor_VarDecl && (parent == CXCursor_FunctionDecl || parent == CXCursor_CXXMethod));
  }

  // The helper a call of a template instance calls (parsed on first use).
  std::string instance(CXCursor callee) {
    const CXCursor canon = clang_getCanonicalCursor(callee);
    if (auto it = instances_.find(canon.data[0]); it != instances_.end()) return it->second;
    const std::string name = str(clang_getCursorSpelling(callee)) + "_inst" + std::to_string(instances_.size());
    instances_[canon.data[0]] = name;
    bool has_body = false;
    for (CXCursor k : children(callee)) has_body = has_body || clang_getCursorKind(k) == CXCursor_CompoundStmt;
    if (!has_body) return name;  // undefined: check.cpp names the call
    Function f;
    f.name = name, f.ret = type_of(clang_getResultType(clang_getCursorType(callee)));
    std::vector<CXCursor> params;
    for (int i = 0; i < clang_Cursor_getNumArguments(callee); ++i) params.push_back(clang_Cursor_getArgument(callee, static_cast<unsigned>(i)));
    body(callee, f, params, {});
    return name;
  }

  // A lambda expression: its helper (parsed on first sight), and as a value the captured values.
  Expr lambda(CXCursor c) {
    const void* const key = clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(c))).data[0];
    std::vector<CXCursor> params;
    CXCursor body_cursor = clang_getNullCursor();
    for (CXCursor k : children(c)) {
      if (clang_getCursorKind(k) == CXCursor_ParmDecl) params.push_back(k);
      if (clang_getCursorKind(k) == CXCursor_CompoundStmt) body_cursor = k;
    }
    if (clang_Cursor_isNull(body_cursor)) return unsupported(c, "a lambda decy cannot read");
    // The captures: locals named in the body but declared outside the lambda, in order of appearance.
    std::vector<CXCursor> captured;
    const CXSourceRange extent = clang_getCursorExtent(c);
    const unsigned begin = offset_of(clang_getRangeStart(extent)), end = offset_of(clang_getRangeEnd(extent));
    std::function<void(CXCursor)> walk = [&](CXCursor k) {
      if (clang_getCursorKind(k) == CXCursor_DeclRefExpr) {
        const CXCursor d = clang_getCursorReferenced(k);
        const unsigned at = offset_of(clang_getCursorLocation(d));
        const bool outside = at < begin || at >= end || loc(d).file != loc(c).file;
        if (is_local(d) && outside && std::none_of(captured.begin(), captured.end(), [&](CXCursor x) { return clang_equalCursors(x, d); }))
          captured.push_back(d);
      }
      for (CXCursor kid : children(k)) walk(kid);
    };
    walk(body_cursor);
    std::vector<Expr> values;
    for (CXCursor d : captured) push_arg(values, decl_ref_of(c, d));
    if (!closures_.contains(key)) {
      Closure k;
      k.helper = "lambda_" + std::to_string(loc(c).line) + "_" + std::to_string(closures_.size());
      std::map<std::string, std::vector<Expr>> inner;  // closures it captures: their values are its parameters too
      Function f;
      f.name = k.helper;
      for (CXCursor d : captured) {
        const std::string name = str(clang_getCursorSpelling(d));
        if (const Closure* kk = closure_of(clang_getCursorType(d))) {
          for (const auto& [leaf, t] : kk->leaves) k.leaves.emplace_back(name + "_cap_" + leaf, t);
          inner[name] = closure_params(f, name, *kk, loc(c));
        } else {
          Type t = type_of(clang_getCursorType(d));
          t.reference = false;
          k.leaves.emplace_back(name, t);
          f.params.push_back({name, t, loc(c)});
        }
      }
      closures_[key] = k;
      f.ret.scalar = Scalar::Void;
      std::function<void(CXCursor)> ret = [&](CXCursor s) {  // the return type: a return statement's value
        if (clang_getCursorKind(s) == CXCursor_LambdaExpr) return;
        if (clang_getCursorKind(s) == CXCursor_ReturnStmt && !operands(s).empty()) f.ret = type_of(clang_getCursorType(operands(s)[0]));
        for (CXCursor kid : children(s)) ret(kid);
      };
      ret(body_cursor);
      f.ret.is_const = false;
      body(c, f, params, std::move(inner));
      std::set<std::string> names;  // captures are passed by value: a lambda assigning to one is refused
      for (CXCursor d : captured) names.insert(str(clang_getCursorSpelling(d)));
      find_capture_assignments(m_.functions.back(), names, m_.diagnostics);
    }
    return closure_pack(c, closures_.at(key), std::move(values));
  }

  // The value of a captured variable d where the lambda c stands.
  Expr decl_ref_of(CXCursor c, CXCursor d) {
    const std::string name = str(clang_getCursorSpelling(d));
    if (const Closure* k = closure_of(clang_getCursorType(d))) {
      auto it = closure_vars_.find(name);
      if (it == closure_vars_.end()) return unsupported(c, "a lambda capturing the lambda '" + name + "' decy has not seen");
      return closure_pack(c, *k, it->second);
    }
    Expr e;
    e.kind = Expr::Kind::Var, e.name = name, e.loc = loc(c), e.type = type_of(clang_getCursorType(d));
    e.type.reference = false;
    return e;
  }

  // `load(i)` on a closure: its helper, the captured values first.
  Expr closure_call(CXCursor c) {
    const int n = clang_Cursor_getNumArguments(c);
    if (n < 1) return unsupported(c, "a call of a lambda decy cannot read");
    Expr object = expr(clang_Cursor_getArgument(c, 0));
    if (object.kind != Expr::Kind::Call || !object.name.starts_with(kClosurePack)) return unsupported(c, "a call of a callable that is not a lambda");
    Expr e;
    e.kind = Expr::Kind::Call, e.loc = loc(c), e.type = type_of(clang_getCursorType(c)), e.name = object.name.substr(kClosurePack.size());
    e.args = std::move(object.args);
    for (int i = 1; i < n; ++i) push_arg(e.args, expr(clang_Cursor_getArgument(c, static_cast<unsigned>(i))));
    note_call(e.name);
    return e;
  }

  Module& m_;
  CXTranslationUnit tu_;
  Function* current_ = nullptr;
  std::map<std::string, std::shared_ptr<const Record>> records_;  // by name (null: not a struct of scalars)
  std::map<const void*, Closure> closures_;                        // by lambda class (its declaration)
  std::map<const void*, std::string> instances_;                   // template instance -> its helper
  std::vector<std::string> instances_asked_;                        // the appended instance lines' kernels, in order
  std::map<std::string, std::vector<Expr>> closure_vars_;          // in the function parsed: closure -> captured values
  inline static const std::string kArrayInit = "__decy_array";    // an array's initializer list (Call, args: the elements)
  inline static const std::string kClosurePack = "decy closure ";  // a closure as a value (Call, args: its captured values)
};

// The file's explicit instantiations of kernel templates, as written ("k<64, true>"): Note [Template kernels].
std::vector<std::string> explicit_instances(const std::string& text) {
  static const std::regex pattern(R"(\btemplate\s+(?:__global__\s+)?void\s+([A-Za-z_]\w*\s*<[^;{}()]*>)\s*\()");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) out.push_back((*it)[1].str());
  return out;
}

Module parse(const std::string& name, const std::string* given, const ParseOptions& options) {
  Module m;
  m.file = name;
  const auto flags = parse_flags(options);
  std::vector<const char*> argv;
  for (const auto& f : flags) argv.push_back(f.c_str());
  std::string text;
  if (given != nullptr) {
    text = *given;
  } else {
    std::ifstream in(name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  // Note [Template kernels]: one line per instance after the file's last line.
  std::vector<std::string> instances;
  for (const auto& w : explicit_instances(text))
    if (std::none_of(instances.begin(), instances.end(), [&](const std::string& x) { return instance_name(x) == instance_name(w); })) instances.push_back(w);
  for (const auto& w : options.instances)
    if (std::none_of(instances.begin(), instances.end(), [&](const std::string& x) { return instance_name(x) == instance_name(w); })) instances.push_back(w);
  if (!text.empty() && text.back() != '\n') text += '\n';
  const unsigned file_lines = static_cast<unsigned>(std::count(text.begin(), text.end(), '\n'));
  for (std::size_t i = 0; i < instances.size(); ++i) text += "static auto* const " + std::string(kInstanceVar) + std::to_string(i) + " = &" + instances[i] + ";\n";
  std::vector<CXUnsavedFile> unsaved = {{kBuiltinsPath, kBuiltinsHeader, static_cast<unsigned long>(std::char_traits<char>::length(kBuiltinsHeader))}};
  unsaved.push_back({name.c_str(), text.data(), static_cast<unsigned long>(text.size())});
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = nullptr;
  const CXErrorCode rc = clang_parseTranslationUnit2(index, name.c_str(), argv.data(), static_cast<int>(argv.size()), unsaved.data(),
                                                     static_cast<unsigned>(unsaved.size()), CXTranslationUnit_None, &tu);
  if (rc != CXError_Success || tu == nullptr) {
    m.clang_errors.push_back(diagnostic(name, 0, "libclang could not parse the file (error " + std::to_string(static_cast<int>(rc)) + ")"));
    clang_disposeIndex(index);
    return m;
  }
  for (unsigned i = 0; i < clang_getNumDiagnostics(tu); ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXFile f = nullptr;
      unsigned line = 0;
      clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &line, nullptr, nullptr);
      const std::string file = f != nullptr ? str(clang_getFileName(f)) : name;
      if (file == name && line > file_lines && line - file_lines <= instances.size())  // an appended instance line
      {
        std::string why = str(clang_getDiagnosticSpelling(d));
        if (why.find("overloaded function type") != std::string::npos) why = "its template arguments match no template of that name";
        m.clang_errors.push_back(diagnostic(name, 0, "kernel instance '" + instances[line - file_lines - 1] + "': " + why));
      }
      else
        m.clang_errors.push_back(diagnostic(file, line, str(clang_getDiagnosticSpelling(d))));
    }
    clang_disposeDiagnostic(d);
  }
  Parser parser(m, tu, instances);
  parser.top(clang_getTranslationUnitCursor(tu));
  parser.drop_instantiated_templates();
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return m;
}

}  // namespace

std::vector<std::string> parse_flags(const ParseOptions& options) {
  std::vector<std::string> f = {"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80",
                                "-std=c++17", "-Wno-unknown-cuda-version", "-include", kBuiltinsPath};
  for (const auto& d : options.defines) f.push_back("-D" + d);
  for (const auto& d : options.includes) f.push_back("-I" + d);
  return f;
}

std::string instance_name(const std::string& written) {
  std::string out;
  for (char ch : written) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') out += ch;
    else if (ch == '-') out += 'm';
    else if (ch == '<' || ch == ',' || ch == ':' || ch == '.') out += out.empty() || out.back() == '_' ? "" : "_";
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

Module parse_file(const std::string& path, const ParseOptions& options) { return parse(path, nullptr, options); }

Module parse_source(const std::string& name, const std::string& text, const ParseOptions& options) { return parse(name, &text, options); }

const Function* find_function(const Module& m, const std::string& name) {
  for (const auto& f : m.functions)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<const Function*> kernels(const Module& m) {
  std::vector<const Function*> out;
  for (const auto& f : m.functions)
    if (f.kernel) out.push_back(&f);
  return out;
}

std::string describe(const Type& t) { return t.c_name; }

}  // namespace decy
