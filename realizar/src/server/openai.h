// The OpenAI API's JSON: requests to generation parameters (every field checked, errors naming it), and
// the response, chunk, model-list and error objects. No HTTP and no model here (fuzz/serve_fuzz.cpp
// drives the parsing directly).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/chat_template.h"

namespace realizar::server {

// An error the client gets as {"error": {message, type, param, code}} with this HTTP status.
struct ApiError : std::runtime_error {
  ApiError(int status, std::string message, std::string param = {}, std::string type = {}, std::string code = {})
      : std::runtime_error(std::move(message)), status(status), param(std::move(param)), type(std::move(type)), code(std::move(code)) {}
  int status;
  std::string param, type, code;
  int retry_after_s = 0;  // 429 / 503: the Retry-After header when > 0
};

// Per-request generation parameters (OpenAI defaults: temperature 1, top_p 1; top_k and min_p are
// extensions, off by default).
struct GenParams {
  int max_tokens = -1;  // -1: until the end of text or the stream's context (capped by the server's max_tokens)
  float temperature = 1.0f, top_p = 1.0f, min_p = 0.0f;
  int top_k = 0;
  std::optional<std::uint64_t> seed;  // none: a random one
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;
  std::vector<std::string> stop;
  int logprobs = -1;  // -1: off; else the number of top alternatives per token (0..20)
  bool ignore_eos = false;  // extension (as llama.cpp's): generate max_tokens even past the end of text (load tests)
};

enum class Endpoint { Chat, Completion };

struct ApiRequest {
  Endpoint kind = Endpoint::Chat;
  std::string model;
  std::vector<ChatMessage> messages;  // chat
  std::string prompt;                 // completion
  GenParams params;
  bool stream = false, include_usage = false, echo = false;
};

struct ParseLimits {
  int max_tokens_cap = 4096;  // a larger max_tokens is a 400 naming it
};

// Throws ApiError 400 naming the field for malformed JSON, a missing field, a wrong type or a value out of range.
ApiRequest parse_request(Endpoint kind, std::string_view body, const ParseLimits& limits = {});

nlohmann::json error_json(const ApiError& e);
// "invalid_request_error" for 4xx but 401 ("authentication_error"), 429 ("rate_limit_error"), 5xx ("server_error").
std::string error_type_for(int status);

// One generated token's log-probability and its top alternatives (text, logprob).
struct TokenLogprob {
  std::string token;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;
};

struct Usage {
  std::size_t prompt_tokens = 0, completion_tokens = 0;
};

struct ResponseMeta {
  Endpoint kind = Endpoint::Chat;
  std::string id, model;
  std::int64_t created = 0;
  bool logprobs = false;
};

// The whole (non-streaming) response.
nlohmann::json response_json(const ResponseMeta& m, const std::string& text, const std::vector<TokenLogprob>& lps,
                             const std::string& finish_reason, const Usage& u);
// One streamed chunk: a text delta (with its tokens' logprobs), or the last one with finish_reason.
// first: the chat's first chunk carries the assistant role.
nlohmann::json chunk_json(const ResponseMeta& m, const std::string& text, const std::vector<TokenLogprob>& lps,
                          const std::optional<std::string>& finish_reason, bool first, bool include_usage);
// The usage chunk (choices empty) sent before [DONE] when stream_options.include_usage.
nlohmann::json usage_chunk_json(const ResponseMeta& m, const Usage& u);
nlohmann::json models_json(const std::string& model_id, std::int64_t created);

// JSON text that never throws on invalid UTF-8 (replaced by U+FFFD).
std::string dump(const nlohmann::json& j);

}  // namespace realizar::server
