// decy: CUDA C++ kernels -> GLSL or WGSL compute shaders (docs/DECY.md).
//   decy list FILE.cu [--target glsl|wgsl [--subgroups]] [-D NAME=VALUE]...
//   decy translate FILE.cu --target glsl [--warp32] [--kernel NAME] [-D NAME=VALUE]... [-I DIR]... -o OUT.comp
//   decy translate FILE.cu --target wgsl [--subgroups] [--kernel NAME] [-D NAME=VALUE]... -o OUT.wgsl
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
#include "wgsl.h"

namespace {

int usage(const std::string& why) {
  std::cerr << "decy: " << why << "\n"
            << "usage: decy list FILE.cu [--target glsl|wgsl [--subgroups]] [-D NAME=VALUE]...\n"
            << "       decy translate FILE.cu --target glsl [--warp32] [--kernel NAME] [-D NAME=VALUE]... [-I DIR]... -o OUT.comp\n"
            << "       decy translate FILE.cu --target wgsl [--subgroups] [--kernel NAME] [-D NAME=VALUE]... -o OUT.wgsl\n";
  return 2;
}

// Every kernel, and whether it translates to `target` (glsl when empty): codegen runs too, its errors count.
int list(const decy::Module& m, const std::string& target, bool subgroups) {
  for (const auto& e : m.clang_errors) std::cerr << e.str() << "\n";
  for (const decy::Function* k : decy::kernels(m)) {
    std::cout << (k->instance.empty() ? k->name : k->instance + " [" + k->name + "]") << "(";
    for (std::size_t i = 0; i < k->params.size(); ++i) std::cout << (i ? ", " : "") << k->params[i].type.c_name << " " << k->params[i].name;
    const decy::Checked c = decy::check(m, k->name);
    const auto errors = target == "wgsl" ? decy::emit_wgsl(c, m.file, {subgroups}).errors : decy::emit_glsl(c, m.file).errors;
    std::cout << ")  " << k->loc.str() << (errors.empty() ? "" : "  [not translatable: " + errors[0].message + "]") << "\n";
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
  bool subgroups = false;  // wgsl: allow warp shuffles (WebGPU's 'subgroups' feature)
  decy::GlslOptions glsl;  // --warp32: warps of 32 emulated through shared memory (Note [Emulated warps])
  decy::ParseOptions options;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(what) + " needs a value");
      return args[++i];
    };
    try {
      if (a == "--target") target = value("--target");
      else if (a == "--kernel") kernel = value("--kernel");  // a name, or a template kernel's instance "k<64, true>"
      else if (a == "-o") out = value("-o");
      else if (a == "--subgroups") subgroups = true;
      else if (a == "--warp32") glsl.warp32 = true;
      else if (a == "-D") options.defines.push_back(value("-D"));
      else if (a == "-I") options.includes.push_back(value("-I"));
      else if (a.starts_with("-I") && a.size() > 2) options.includes.push_back(a.substr(2));
      else if (a.starts_with("-D") && a.size() > 2) options.defines.push_back(a.substr(2));
      else if (!a.starts_with("-") && file.empty()) file = a;
      else return usage("unexpected argument '" + a + "'");
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  if (file.empty()) return usage("no input file");
  if (!target.empty() && target != "glsl" && target != "wgsl") return usage("--target is glsl or wgsl");
  if (subgroups && target != "wgsl") return usage("--subgroups is a wgsl option (GLSL output always may use subgroups)");
  if (glsl.warp32 && target != "glsl") return usage("--warp32 is a glsl option");
  if (!std::ifstream(file)) {
    std::cerr << file << ": error: cannot read the file\n";
    return 1;
  }
  if (kernel.find('<') != std::string::npos) {  // Note [Template kernels] (parse.cpp)
    options.instances.push_back(kernel);
    kernel = decy::instance_name(kernel);
  }
  const decy::Module m = decy::parse_file(file, options);
  if (cmd == "list") return list(m, target, subgroups);
  if (cmd != "translate") return usage("unknown command '" + cmd + "'");
  if (target.empty()) return usage("--target glsl or --target wgsl is required");
  if (out.empty()) return usage("-o OUT is required");
  const decy::Checked c = decy::check(m, kernel);
  std::string text;
  std::vector<decy::Diagnostic> errors;
  if (target == "glsl") {
    decy::Glsl g = decy::emit_glsl(c, file, glsl);
    text = std::move(g.text), errors = std::move(g.errors);
  } else {
    decy::Wgsl w = decy::emit_wgsl(c, file, {subgroups});
    text = std::move(w.text), errors = std::move(w.errors);
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::cerr << e.str() << "\n";
    std::cerr << "decy: " << (c.kernel ? c.kernel->name : kernel) << " not translated to " << target << " (" << errors.size() << " error"
              << (errors.size() == 1 ? "" : "s") << ")\n";
    return 1;
  }
  // Written to a temporary name and renamed into place: a failed write leaves no half shader behind.
  const std::string tmp = out + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream o(tmp, std::ios::binary);
    o << text;
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
