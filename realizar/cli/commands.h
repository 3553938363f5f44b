// The realizar subcommands: each registers its options on the CLI and returns its exit code.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>

namespace realizar::cli {

// Adds `backends` to app; the returned action runs it when the subcommand was given.
std::function<int()> add_backends_command(CLI::App& app);

}  // namespace realizar::cli
