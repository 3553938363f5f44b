// Loads contracts/<family>.yaml: per op, its input domain and its obligations.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace trueno::test {

struct Obligation {
  std::string type;      // checker name (contracts/README.md)
  std::string backends;  // "simd" or "all"
  std::string property, bound;
  std::map<std::string, std::string> params;  // numeric/text parameters (max_ulp, factor, magnitude, ...)
  double num(const std::string& key) const;    // throws naming the op when missing
  std::string text(const std::string& key) const;
};

struct OpContract {
  std::string family, op;
  double lo = -1.0, hi = 1.0;  // input domain
  std::vector<Obligation> obligations;
};

// Every op of every contracts/*.yaml, keyed by op name. Throws std::runtime_error naming the file and
// field on malformed YAML. The folder is TRUENO_CONTRACTS_DIR (set by CMake) unless overridden by the
// environment variable of the same name.
const std::map<std::string, OpContract>& contracts();
std::string contracts_dir();

extern const char* const kKnownObligationTypes[];

}  // namespace trueno::test
