// decy's typed IR: what the parser (parse.cpp) builds from libclang's AST, the checks (check.cpp) judge and
// the GLSL code generator (glsl.cpp) prints. Small on purpose: the CUDA subset of docs/DECY.md, nothing more.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace decy {

struct Loc {
  std::string file;
  unsigned line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

// A diagnostic: "file:line: error: what" (never a silent mistranslation: Note [Unsupported constructs]).
struct Diagnostic {
  Loc loc;
  std::string message;
  std::string str() const { return loc.str() + ": error: " + message; }
};
// Built member by member (GCC 12 warns falsely about nested braced temporaries of strings).
inline Diagnostic diagnostic(const std::string& file, unsigned line, std::string message) {
  Diagnostic d;
  d.loc.file = file, d.loc.line = line, d.message = std::move(message);
  return d;
}

// Scalars with a GLSL counterpart. Unsupported: a type decy does not translate (its C spelling in Type::c_name).
// U16/I16 (CUDA's unsigned short / short: the f16 bits of a KV cache) are 32-bit values in GLSL, stored
// as 16-bit buffer elements (Note [16-bit values], glsl_support.cpp); U8/I8 the same with 8 bits.
enum class Scalar { Void, Bool, I32, U32, I64, U64, F32, F64, U16, I16, U8, I8, Record, Unsupported };

// A struct whose fields are 32- and 64-bit scalars (Note [Structs of scalars], glsl_support.cpp): C's layout is
// std430's, so a buffer of them is a buffer of GLSL structs.
struct Record {
  std::string name;
  std::uint32_t bytes = 0;
  std::vector<std::pair<std::string, Scalar>> fields;
};

struct Type {
  Scalar scalar = Scalar::Void;
  bool pointer = false;    // a kernel parameter's buffer, or a local view into one
  bool is_const = false;   // pointee const (pointers) -> readonly buffer
  bool restrict_ = false;  // __restrict__ pointer -> restrict buffer
  bool reference = false;  // T& parameter of a __device__ helper -> inout
  std::uint64_t array = 0; // T name[array] (local or __shared__)
  std::uint32_t lanes = 0; // CUDA's vector types: float2/float4, int2/int4, uint2/uint4 (scalar: lanes 2 or 4)
  enum class Half : std::uint8_t { None, F16, BF16, F16x2 };
  Half half = Half::None;  // __half / __nv_bfloat16 (scalar U16) and __half2 (U32): bit patterns (Note [Half types])
  std::shared_ptr<const Record> record;  // scalar Record: a struct of scalars
  std::string c_name;      // the C spelling, for diagnostics
};

struct Expr {
  enum class Kind {
    Var,      // name: a local, a parameter or a __shared__ array
    Builtin,  // name: GLSL builtin (gl_LocalInvocationID.x, ...)
    IntLit,   // ival (bits), type says signedness and width
    FloatLit, // fval
    BoolLit,  // ival
    Unary,    // op prefix: - + ! ~ ++ -- *
    Postfix,  // op: ++ --
    Binary,   // op: arithmetic, comparison, logical, bitwise, assignment (= += ...), comma
    Cond,     // args: c ? a : b
    Call,     // name: a __device__ helper or a CUDA builtin function (args)
    Index,    // args[0][args[1]]
    Cast,     // to type (args[0])
    Null,     // nullptr (type.pointer): only an operand of == / != against a pointer parameter
    Field,    // name: x y z w of a vector, or a field of a struct of scalars (args[0])
  };
  Kind kind = Kind::IntLit;
  Type type;
  std::string name, op;
  std::uint64_t ival = 0;
  double fval = 0;
  std::vector<Expr> args;
  Loc loc;
};

struct Stmt;
struct VarDecl {
  std::string name;
  Type type;
  bool shared = false;  // __shared__: hoisted to a GLSL `shared` global
  bool dynamic = false; // extern __shared__ T name[]: type is T*, the dynamic shared memory (Note [Dynamic shared memory], glsl.cpp)
  bool closure = false; // a lambda held in a local (parse.cpp drops it: its calls take the captured values)
  bool has_init = false;
  Expr init;
  Loc loc;
};

struct Stmt {
  enum class Kind { Block, Decl, Expr, If, For, While, Do, Return, Break, Continue, Empty };
  Kind kind = Kind::Empty;
  std::vector<Stmt> body;       // Block: statements; If: then [, else]; For: init, body; While/Do: body
  std::vector<VarDecl> decls;   // Decl (several declarators of one statement)
  std::vector<Expr> exprs;      // Expr: the expression; If/While/Do: condition; For: cond, inc; Return: value
  bool has_cond = true;         // For without a condition
  Loc loc;
};

struct Param {
  std::string name;
  Type type;
  Loc loc;
};

struct Function {
  std::string name;
  std::string instance;  // a template kernel's instance as written ("k<64, true>"); name is then its identifier (k_64_true)
  bool kernel = false;   // __global__
  Type ret;
  std::vector<Param> params;
  Stmt body;
  Loc loc;
  unsigned end_line = 0;
  std::vector<std::string> calls;  // helpers called (names), for the call graph
};

// A kernel the file defines that decy cannot translate as a whole (a template): listed, with why.
struct Skipped {
  std::string name;
  Diagnostic why;
};

struct Module {
  std::string file;
  std::vector<Skipped> skipped;
  std::vector<Function> functions;      // definitions in the main file, in source order
  std::vector<Diagnostic> diagnostics;  // parse and check errors
  std::vector<Diagnostic> clang_errors; // libclang's own errors (judged by the functions they fall in)
};

const Function* find_function(const Module& m, const std::string& name);
std::vector<const Function*> kernels(const Module& m);
std::string describe(const Type& t);  // "const float* __restrict__", "int", "float[256]"

}  // namespace decy
