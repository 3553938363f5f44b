// One validation for every numeric option: the whole text must be a number inside a stated range, or the
// command stops with a usage error (exit 2) such as
//   --ctx-size: -1 is out of range: expected an integer from 0 to 16777216
// The ranges are written in plain numbers (CLI11's own checks print doubles with 309 digits).
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>

namespace realizar::cli {

CLI::Validator integer_in(long long lo, long long hi);
CLI::Validator unsigned_64();  // 0 to 2^64 - 1 (seeds)
// A real in [lo, hi]; lo_open / hi_open exclude that end.
CLI::Validator real_in(double lo, double hi, bool lo_open = false, bool hi_open = false);

// The largest context any command accepts (2^24 positions); the model and the memory may allow less.
inline constexpr long long kMaxContext = 1 << 24;

}  // namespace realizar::cli
