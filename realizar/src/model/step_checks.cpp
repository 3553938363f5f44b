#include "model/step_checks.h"

namespace realizar {

void check_forward(const Config& c, std::size_t pos, std::size_t n_ctx, std::span<const std::int32_t> tokens) {
  const std::size_t T = tokens.size();
  if (T == 0) throw trueno::InvalidArgument("forward: no tokens");
  if (pos + T > n_ctx) throw trueno::InvalidArgument(strcat("forward: ", pos, " + ", T, " tokens exceed the context size ", n_ctx));
  for (const auto id : tokens)
    if (id < 0 || static_cast<std::uint32_t>(id) >= c.n_vocab)
      throw trueno::InvalidArgument(strcat("forward: token id ", id, " is outside the vocabulary [0, ", c.n_vocab, ")"));
}

}  // namespace realizar
