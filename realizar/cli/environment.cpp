#include "environment.h"

#include <cstdlib>
#include <string>

#include "trueno/backend.h"
#include "trueno/error.h"
#include "trueno/threads.h"

namespace realizar::cli {

void check_environment() {
  (void)trueno::num_threads();  // reads and validates TRUENO_THREADS; its error names the variable
  const char* b = std::getenv("TRUENO_BACKEND");
  if (b == nullptr || *b == '\0') return;
  try {
    (void)trueno::parse_backend(b);  // availability is checked where a backend is used (`backends` reports it)
  } catch (const trueno::InvalidArgument& e) {
    throw trueno::InvalidArgument("TRUENO_BACKEND=" + std::string(b) + ": " + e.what());
  }
}

}  // namespace realizar::cli
