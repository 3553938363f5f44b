#include "server/openai.h"

#include <cmath>
#include <limits>

namespace realizar::server {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& param, const std::string& what) {
  throw ApiError(400, "'" + param + "' " + what, param, "invalid_request_error", "invalid_value");
}

// The field's value, or nullptr when absent or null (OpenAI treats null as "not given").
const json* field(const json& o, const char* name) {
  const auto it = o.find(name);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& v, const std::string& name, double lo, double hi) {
  if (!v.is_number()) bad(name, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) bad(name, "must be between " + dump(lo) + " and " + dump(hi) + ", got " + dump(v));
  return d;
}

std::int64_t integer(const json& v, const std::string& name, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) bad(name, "must be an integer");
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    bad(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + dump(v));
  const std::int64_t i = v.get<std::int64_t>();
  if (i < lo || i > hi) bad(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(i));
  return i;
}

bool boolean(const json& v, const std::string& name) {
  if (!v.is_boolean()) bad(name, "must be a boolean");
  return v.get<bool>();
}

std::string text_of(const json& v, const std::string& name) {
  if (!v.is_string()) bad(name, "must be a string");
  return v.get<std::string>();
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts (joined).
std::string content_of(const json& v, const std::string& name) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) bad(name, "must be a string or an array of text parts");
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string part = name + "[" + std::to_string(i) + "]";
    if (!v[i].is_object()) bad(part, "must be an object");
    const json* type = field(v[i], "type");
    if (!type || text_of(*type, part + ".type") != "text") bad(part + ".type", "must be \"text\" (only text content is supported)");
    const json* t = field(v[i], "text");
    if (!t) bad(part + ".text", "is required");
    out += text_of(*t, part + ".text");
  }
  return out;
}

void parse_messages(const json& body, ApiRequest& r) {
  const json* msgs = field(body, "messages");
  if (!msgs) bad("messages", "is required");
  if (!msgs->is_array()) bad("messages", "must be an array");
  if (msgs->empty()) bad("messages", "must not be empty");
  for (std::size_t i = 0; i < msgs->size(); ++i) {
    const std::string name = "messages[" + std::to_string(i) + "]";
    const json& m = (*msgs)[i];
    if (!m.is_object()) bad(name, "must be an object");
    const json* role = field(m, "role");
    if (!role) bad(name + ".role", "is required");
    ChatMessage cm;
    cm.role = text_of(*role, name + ".role");
    if (cm.role != "system" && cm.role != "developer" && cm.role != "user" && cm.role != "assistant" && cm.role != "tool")
      bad(name + ".role", "must be one of system, developer, user, assistant, tool; got \"" + cm.role + "\"");
    const json* content = field(m, "content");
    if (content) cm.content = content_of(*content, name + ".content");
    else if (cm.role != "assistant") bad(name + ".content", "is required");
    r.messages.push_back(std::move(cm));
  }
}

void parse_prompt(const json& body, ApiRequest& r) {
  const json* p = field(body, "prompt");
  if (!p) bad("prompt", "is required");
  if (p->is_string()) {
    r.prompt = p->get<std::string>();
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    r.prompt = (*p)[0].get<std::string>();
  } else if (p->is_array() && p->size() > 1) {
    bad("prompt", "must be one string: several prompts in one request are not supported");
  } else {
    bad("prompt", "must be a string");
  }
}

}  // namespace

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string error_type_for(int status) {
  if (status == 401) return "authentication_error";
  if (status == 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

nlohmann::json error_json(const ApiError& e) {
  return {{"error", {{"message", e.what()},
                     {"type", e.type.empty() ? error_type_for(e.status) : e.type},
                     {"param", e.param.empty() ? json(nullptr) : json(e.param)},
                     {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}};
}

ApiRequest parse_request(Endpoint kind, std::string_view text, const ParseLimits& limits) {
  json body;
  try {
    body = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number too large (found by fuzz/serve_fuzz.cpp)
    throw ApiError(400, std::string("the body is not valid JSON: ") + e.what(), "body", "invalid_request_error", "invalid_json");
  }
  if (!body.is_object()) throw ApiError(400, "the body must be a JSON object", "body", "invalid_request_error", "invalid_json");
  ApiRequest r;
  r.kind = kind;
  if (const json* v = field(body, "model")) r.model = text_of(*v, "model");
  if (kind == Endpoint::Chat) parse_messages(body, r);
  else parse_prompt(body, r);

  GenParams& g = r.params;
  const json* mt = field(body, "max_completion_tokens");
  const char* mt_name = "max_completion_tokens";
  if (!mt) mt = field(body, "max_tokens"), mt_name = "max_tokens";
  if (mt) g.max_tokens = static_cast<int>(integer(*mt, mt_name, 1, limits.max_tokens_cap));
  if (const json* v = field(body, "temperature")) g.temperature = static_cast<float>(number(*v, "temperature", 0, 2));
  if (const json* v = field(body, "top_p")) {
    g.top_p = static_cast<float>(number(*v, "top_p", 0, 1));
    if (g.top_p == 0) bad("top_p", "must be greater than 0");
  }
  if (const json* v = field(body, "top_k")) g.top_k = static_cast<int>(integer(*v, "top_k", 0, 1 << 30));
  if (const json* v = field(body, "min_p")) {
    g.min_p = static_cast<float>(number(*v, "min_p", 0, 1));
    if (g.min_p >= 1) bad("min_p", "must be less than 1");
  }
  if (const json* v = field(body, "seed")) {
    if (!v->is_number_integer()) bad("seed", "must be an integer");
    g.seed = v->is_number_unsigned() ? v->get<std::uint64_t>() : static_cast<std::uint64_t>(v->get<std::int64_t>());
  }
  if (const json* v = field(body, "presence_penalty")) g.presence_penalty = static_cast<float>(number(*v, "presence_penalty", -2, 2));
  if (const json* v = field(body, "frequency_penalty")) g.frequency_penalty = static_cast<float>(number(*v, "frequency_penalty", -2, 2));
  if (const json* v = field(body, "stop")) {
    if (v->is_string()) {
      g.stop.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      if (v->size() > 4) bad("stop", "may hold at most 4 strings");
      for (std::size_t i = 0; i < v->size(); ++i) g.stop.push_back(text_of((*v)[i], "stop[" + std::to_string(i) + "]"));
    } else {
      bad("stop", "must be a string or an array of strings");
    }
  }
  if (const json* v = field(body, "ignore_eos")) g.ignore_eos = boolean(*v, "ignore_eos");
  if (const json* v = field(body, "n"); v && integer(*v, "n", 1, 1) != 1) bad("n", "must be 1");
  if (kind == Endpoint::Chat) {
    const json* lp = field(body, "logprobs");
    const bool want = lp && boolean(*lp, "logprobs");
    if (const json* v = field(body, "top_logprobs")) {
      const int k = static_cast<int>(integer(*v, "top_logprobs", 0, 20));
      if (!want) bad("top_logprobs", "needs \"logprobs\": true");
      g.logprobs = k;
    } else if (want) {
      g.logprobs = 0;
    }
  } else {
    if (const json* v = field(body, "logprobs")) g.logprobs = static_cast<int>(integer(*v, "logprobs", 0, 5));
    if (const json* v = field(body, "echo")) r.echo = boolean(*v, "echo");
    if (const json* v = field(body, "suffix")) {
      if (!text_of(*v, "suffix").empty()) bad("suffix", "is not supported");
    }
  }
  if (const json* v = field(body, "stream")) r.stream = boolean(*v, "stream");
  if (const json* v = field(body, "stream_options")) {
    if (!v->is_object()) bad("stream_options", "must be an object");
    if (!r.stream) bad("stream_options", "is only allowed with \"stream\": true");
    if (const json* u = field(*v, "include_usage")) r.include_usage = boolean(*u, "stream_options.include_usage");
  }
  return r;
}

namespace {

json chat_logprobs(const std::vector<TokenLogprob>& lps) {
  json content = json::array();
  auto bytes = [](const std::string& s) {
    json b = json::array();
    for (unsigned char c : s) b.push_back(static_cast<int>(c));
    return b;
  };
  for (const auto& t : lps) {
    json top = json::array();
    for (const auto& [tok, lp] : t.top) top.push_back({{"token", tok}, {"logprob", lp}, {"bytes", bytes(tok)}});
    content.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", bytes(t.token)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json completion_logprobs(const std::vector<TokenLogprob>& lps, std::size_t offset) {
  json tokens = json::array(), lp = json::array(), top = json::array(), off = json::array();
  for (const auto& t : lps) {
    tokens.push_back(t.token);
    lp.push_back(t.logprob);
    json alt = json::object();
    for (const auto& [tok, l] : t.top) alt[tok] = l;
    top.push_back(alt);
    off.push_back(offset);
    offset += t.token.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", lp}, {"top_logprobs", top}, {"text_offset", off}};
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens}, {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

}  // namespace

nlohmann::json response_json(const ResponseMeta& m, const std::string& text, const std::vector<TokenLogprob>& lps,
                             const std::string& finish_reason, const Usage& u) {
  json choice;
  if (m.kind == Endpoint::Chat) {
    choice = {{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}},
              {"logprobs", m.logprobs ? chat_logprobs(lps) : json(nullptr)}, {"finish_reason", finish_reason}};
  } else {
    choice = {{"index", 0}, {"text", text}, {"logprobs", m.logprobs ? completion_logprobs(lps, 0) : json(nullptr)},
              {"finish_reason", finish_reason}};
  }
  return {{"id", m.id}, {"object", m.kind == Endpoint::Chat ? "chat.completion" : "text_completion"},
          {"created", m.created}, {"model", m.model}, {"choices", json::array({choice})}, {"usage", usage_json(u)}};
}

nlohmann::json chunk_json(const ResponseMeta& m, const std::string& text, const std::vector<TokenLogprob>& lps,
                          const std::optional<std::string>& finish_reason, bool first, bool include_usage) {
  json choice;
  const json fr = finish_reason ? json(*finish_reason) : json(nullptr);
  if (m.kind == Endpoint::Chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (!finish_reason && !first)) delta["content"] = text;
    else if (first) delta["content"] = text;
    choice = {{"index", 0}, {"delta", delta}, {"logprobs", m.logprobs && !lps.empty() ? chat_logprobs(lps) : json(nullptr)},
              {"finish_reason", fr}};
  } else {
    choice = {{"index", 0}, {"text", text}, {"logprobs", m.logprobs && !lps.empty() ? completion_logprobs(lps, 0) : json(nullptr)},
              {"finish_reason", fr}};
  }
  json j = {{"id", m.id}, {"object", m.kind == Endpoint::Chat ? "chat.completion.chunk" : "text_completion"},
            {"created", m.created}, {"model", m.model}, {"choices", json::array({choice})}};
  if (include_usage) j["usage"] = nullptr;
  return j;
}

nlohmann::json usage_chunk_json(const ResponseMeta& m, const Usage& u) {
  return {{"id", m.id}, {"object", m.kind == Endpoint::Chat ? "chat.completion.chunk" : "text_completion"},
          {"created", m.created}, {"model", m.model}, {"choices", json::array()}, {"usage", usage_json(u)}};
}

nlohmann::json models_json(const std::string& model_id, std::int64_t created) {
  return {{"object", "list"}, {"data", json::array({{{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "realizar"}}})}};
}

}  // namespace realizar::server
