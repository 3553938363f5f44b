// The realizar subcommands: each registers its options on the CLI and returns an action that runs it
// (returning its exit code) when that subcommand was given, or -1 when it was not.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>

namespace realizar::cli {

std::function<int()> add_backends_command(CLI::App& app);
std::function<int()> add_info_command(CLI::App& app);
std::function<int()> add_tokenize_command(CLI::App& app);
std::function<int()> add_run_command(CLI::App& app);
std::function<int()> add_logits_command(CLI::App& app);
std::function<int()> add_synth_command(CLI::App& app);
std::function<int()> add_bench_command(CLI::App& app);
std::function<int()> add_parity_command(CLI::App& app);
std::function<int()> add_chat_command(CLI::App& app);
#ifdef REALIZAR_WITH_SERVE
std::function<int()> add_serve_command(CLI::App& app);  // built with cpp-httplib
#endif

}  // namespace realizar::cli
