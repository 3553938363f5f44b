// realizar's version string.
#include "realizar/version.h"

namespace realizar {

std::string_view version() { return "0.1.0"; }

}  // namespace realizar
