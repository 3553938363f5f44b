// Benchmark registration driven by the kernel list: every op of a family on every available backend.
#pragma once
#include <benchmark/benchmark.h>

#include <string_view>
#include <vector>

namespace trueno::bench {

// Registers "<op>/<backend>/<n>" for every kernel of `family` (vector kinds) and sizes 1K..16M.
int register_family(std::string_view family);

// Random floats in [lo, hi] (fixed seed: benchmarks compare like with like).
std::vector<float> random_floats(std::size_t n, float lo, float hi, unsigned seed = 1);

}  // namespace trueno::bench
