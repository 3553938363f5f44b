// Message building for errors and reports: trueno's own helper (core/strings.h), used by name here.
#pragma once
#include "core/strings.h"

namespace realizar {

using trueno::strcat;

}  // namespace realizar
