// The library's one logger: level from TRUENO_LOG (error, warn, info, debug; default warn), sink replaceable.
#pragma once
#include <functional>
#include <string_view>

namespace trueno {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

void log(LogLevel level, std::string_view message);
bool log_enabled(LogLevel level);
void set_log_level(LogLevel level);
// Replaces the sink (default: "trueno: <level>: <message>" on stderr); nullptr restores the default.
void set_log_sink(std::function<void(LogLevel, std::string_view)> sink);

}  // namespace trueno
