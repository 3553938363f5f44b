// Benchmarks of the normalize family: every op on every available backend, sizes 1K..16M (bench_util).
#include "bench_util.h"

namespace {
const int registered = trueno::bench::register_family("normalize");
}  // namespace
