// The environment every command honours, checked before any command runs.
#pragma once

namespace realizar::cli {

// TRUENO_THREADS (an integer >= 1) and TRUENO_BACKEND (a backend name): throws naming the variable and
// its value when either is set to something invalid, whichever command runs.
void check_environment();

}  // namespace realizar::cli
