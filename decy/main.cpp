// decy: CUDA C++ kernels -> GLSL compute shaders (docs/DECY.md).
//   decy list FILE.cu [-D NAME=VALUE]...
//   decy translate FILE.cu --target glsl [--kernel NAME] [-D NAME=VALUE]... -o OUT.comp
// Errors go to stderr as file:line: error: what; the exit status is then 1 (2: bad usage).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "check.h"
#include "glsl.h"
#include "parse.h"

namespace {

int usage(const std::string& why) {
  std::cerr << "decy: " << why << "\n"
            << "usage: decy list FILE.cu [-D NAME=VALUE]...\n"
            << "       decy translate FILE.cu --target glsl [--kernel NAME] [-D NAME=VALUE]... -o OUT.comp\n";
  return 2;
}

int list(const decy::Module& m) {
  for (const auto& e : m.clang_errors) std::cerr << e.str() << "\n";
  for (const decy::Function* k : decy::kernels(m)) {
    std::cout << k->name << "(";
    for (std::size_t i = 0; i < k->params.size(); ++i) std::cout << (i ? ", " : "") << k->params[i].type.c_name << " " << k->params[i].name;
    const decy::Glsl g = decy::emit_glsl(decy::check(m, k->name), m.file);  // codegen too: its errors count
    std::cout << ")  " << k->loc.str() << (g.errors.empty() ? "" : "  [not translatable: " + g.errors[0].message + "]") << "\n";
  }
  for (const auto& s : m.skipped) std::cout << s.name << "  " << s.why.loc.str() << "  [not translatable: " << s.why.message << "]\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage("no command");
  const std::string cmd = args[0];
  std::string file, target, kernel, out;
  decy::ParseOptions options;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(what) + " needs a value");
      return args[++i];
    };
    try {
      if (a == "--target") target = value("--target");
      else if (a == "--kernel") kernel = value("--kernel");
      else if (a == "-o") out = value("-o");
      else if (a == "-D") options.defines.push_back(value("-D"));
      else if (a.starts_with("-D") && a.size() > 2) options.defines.push_back(a.substr(2));
      else if (!a.starts_with("-") && file.empty()) file = a;
      else return usage("unexpected argument '" + a + "'");
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  if (file.empty()) return usage("no input file");
  if (!std::ifstream(file)) {
    std::cerr << file << ": error: cannot read the file\n";
    return 1;
  }
  const decy::Module m = decy::parse_file(file, options);
  if (cmd == "list") return list(m);
  if (cmd != "translate") return usage("unknown command '" + cmd + "'");
  if (target == "wgsl") {
    std::cerr << "decy: --target wgsl is not implemented yet (docs/DECY.md): only glsl\n";
    return 1;
  }
  if (target != "glsl") return usage("--target glsl is required");
  if (out.empty()) return usage("-o OUT is required");
  const decy::Checked c = decy::check(m, kernel);
  const decy::Glsl g = decy::emit_glsl(c, file);
  if (!g.errors.empty()) {
    for (const auto& e : g.errors) std::cerr << e.str() << "\n";
    std::cerr << "decy: " << (c.kernel ? c.kernel->name : kernel) << " not translated (" << g.errors.size() << " error"
              << (g.errors.size() == 1 ? "" : "s") << ")\n";
    return 1;
  }
  // Written to a temporary name and renamed into place: a failed write leaves no half shader behind.
  const std::string tmp = out + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream o(tmp, std::ios::binary);
    o << g.text;
    if (!o.flush()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      std::cerr << out << ": error: cannot write the file\n";
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    std::cerr << out << ": error: cannot move the written file into place\n";
    return 1;
  }
  return 0;
}
