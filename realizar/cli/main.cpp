// realizar: the command-line program. Bad usage prints usage and exits 2; runtime errors exit 1.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "commands.h"
#include "environment.h"
#include "gguf/mapped_files.h"
#include "realizar/version.h"
#include "trueno/error.h"

namespace {

// A closed stdin/stdout/stderr would let the next open() (a model, an output file) take its number and
// receive printf's bytes. A read-only /dev/null there makes every write fail instead, which is reported.
void occupy_closed_std_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int n = open("/dev/null", O_RDONLY);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
}

// Output that did not reach stdout (a full disk, a closed stdout) is an error, not a silent success.
int check_stdout(int rc) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return rc;
  std::fprintf(stderr, "realizar: error: writing to standard output failed: %s\n",
               flushed || errno == 0 ? "an earlier write failed" : std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  occupy_closed_std_fds();
  realizar::gguf::report_sigbus_on_mapped_files();
  CLI::App app{"realizar: LLM inference on trueno"};
  app.set_version_flag("--version", std::string(realizar::version()));
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // --help shows every option's default
  namespace c = realizar::cli;
  std::vector<std::function<int()>> commands = {c::add_backends_command(app), c::add_info_command(app),
                                                c::add_tokenize_command(app), c::add_run_command(app),
                                                c::add_logits_command(app), c::add_synth_command(app),
                                                c::add_bench_command(app), c::add_parity_command(app),
                                                c::add_chat_command(app)};
#ifdef REALIZAR_WITH_SERVE
  commands.push_back(c::add_serve_command(app));
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return check_stdout(code == 0 ? 0 : 2);
  }
  try {
    realizar::cli::check_environment();
    for (auto& run : commands) {
      const int rc = run();
      if (rc >= 0) return check_stdout(rc);
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
