// realizar: the command-line program. Bad usage prints usage and exits 2; runtime errors exit 1.
#include <cstdio>
#include <functional>
#include <vector>

#include "commands.h"
#include "realizar/version.h"
#include "trueno/error.h"

int main(int argc, char** argv) {
  CLI::App app{"realizar: LLM inference on trueno"};
  app.set_version_flag("--version", std::string(realizar::version()));
  app.require_subcommand(1);
  namespace c = realizar::cli;
  std::vector<std::function<int()>> commands = {c::add_backends_command(app), c::add_info_command(app),
                                                c::add_tokenize_command(app), c::add_run_command(app),
                                                c::add_logits_command(app), c::add_synth_command(app),
                                                c::add_bench_command(app), c::add_parity_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (auto& run : commands) {
      const int rc = run();
      if (rc >= 0) return rc;
    }
  } catch (const CLI::Error& e) {  // usage found wrong after parsing (e.g. one of two options required)
    std::fprintf(stderr, "realizar: %s\nRun with --help for usage.\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "realizar: error: %s\n", e.what());
    return 1;
  }
  return 2;
}
