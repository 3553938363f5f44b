#include "numbers.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace realizar::cli {
namespace {

std::string plain(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

}  // namespace

CLI::Validator integer_in(long long lo, long long hi) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0') return in_quotes(s) + " is not a number: expected " + range;
        if (errno == ERANGE || v < lo || v > hi) return s + " is out of range: expected " + range;
        return {};
      },
      std::to_string(lo) + ".." + std::to_string(hi));
}

CLI::Validator unsigned_64() {
  const std::string range = "an integer from 0 to 18446744073709551615";
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        (void)std::strtoull(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0') return in_quotes(s) + " is not a number: expected " + range;
        if (errno == ERANGE || s.find('-') != std::string::npos) return s + " is out of range: expected " + range;
        return {};
      },
      "0..2^64-1");
}

CLI::Validator real_in(double lo, double hi, bool lo_open, bool hi_open) {
  const std::string range = !lo_open && !hi_open ? "a number from " + plain(lo) + " to " + plain(hi)
                            : std::string("a number ") + (lo_open ? "greater than " : "at least ") + plain(lo) +
                                  (hi_open ? " and less than " : " and at most ") + plain(hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || std::isnan(v)) return in_quotes(s) + " is not a number: expected " + range;
        if (!(lo_open ? v > lo : v >= lo) || !(hi_open ? v < hi : v <= hi)) return s + " is out of range: expected " + range;
        return {};
      },
      (lo_open ? "(" : "[") + plain(lo) + ", " + plain(hi) + (hi_open ? ")" : "]"));
}

}  // namespace realizar::cli
