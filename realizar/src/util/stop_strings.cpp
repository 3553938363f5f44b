#include "util/stop_strings.h"

#include <algorithm>

namespace realizar {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStrings::push(std::string_view text) {
  if (stopped_) return {};
  pending_ += text;
  std::size_t first = std::string::npos;
  for (const auto& s : stops_) first = std::min(first, pending_.find(s));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, first);
    pending_.clear();
    return out;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  std::size_t hold = 0;
  for (const auto& s : stops_)
    for (std::size_t k = std::min(s.size() - 1, pending_.size()); k > hold; --k)
      if (pending_.compare(pending_.size() - k, k, s, 0, k) == 0) {
        hold = k;
        break;
      }
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopStrings::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace realizar
