// libFuzzer target: the server's request parsing and JSON mapping (realizar/src/server/openai.cpp) on any
// bytes, as both endpoints. Any input either parses or throws ApiError (400); nothing else may escape, and a
// parsed request's response objects must serialize.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/openai.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace realizar::server;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (Endpoint k : {Endpoint::Chat, Endpoint::Completion}) {
    try {
      const ApiRequest r = parse_request(k, body, {4096});
      const std::string prompt = k == Endpoint::Chat ? render_chat(r.messages, true) : r.prompt;
      ResponseMeta m{k, "id", r.model, 0, r.params.logprobs >= 0};
      std::vector<TokenLogprob> lps = {{prompt.substr(0, 8), -0.5f, {{prompt.substr(0, 3), -0.1f}}}};
      (void)dump(response_json(m, prompt, lps, "stop", {1, 2}));
      (void)dump(chunk_json(m, prompt, lps, std::nullopt, true, r.include_usage));
    } catch (const ApiError& e) {
      if (e.status != 400) __builtin_trap();
      (void)dump(error_json(e));
    }
  }
  return 0;
}
