// Sequence's host defaults for picking a token and checking the logits: both read logits().
#include "realizar/model.h"
#include "realizar/recorder.h"
#include "realizar/sampler.h"

namespace realizar {

std::int32_t Sequence::sample(Sampler& s, std::span<const std::int32_t> history) { return s.sample(logits(), history); }

bool Sequence::logits_finite() const { return all_finite(logits()); }

}  // namespace realizar
