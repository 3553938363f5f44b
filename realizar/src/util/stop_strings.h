// Stop strings (`run --stop`, the server's `stop`): generation ends when the text contains one; the stop string itself is not
// printed. Text that might be the start of a stop string is held back until the next piece decides.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace realizar {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);
  // Appends generated text; returns the part that can be printed now.
  std::string push(std::string_view text);
  bool stopped() const { return stopped_; }
  std::string flush();  // what was held back, at the end of generation

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace realizar
