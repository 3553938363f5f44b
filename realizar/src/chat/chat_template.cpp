// ChatTemplate: loading (model metadata, built-in, file) and rendering a conversation.
#include "realizar/chat_template.h"

#include <fstream>
#include <sstream>

#include "chat/ast.h"
#include "chat/builtin_templates.h"
#include "chat/eval.h"
#include "chat/parser.h"
#include "util/strcat.h"

namespace realizar {

TemplateError::TemplateError(const std::string& source, std::size_t line, std::size_t column, std::string construct,
                             const std::string& message)
    : trueno::Error(strcat("chat template ", source, ":", line, ":", column, ": ", construct, ": ", message)),
      line_(line), column_(column), construct_(std::move(construct)) {}

namespace chat {
void Source::fail(std::size_t pos, const std::string& construct, const std::string& message) const {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      ++col;
    }
  }
  throw TemplateError(std::string(name), line, col, construct, message);
}
}  // namespace chat

ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

ChatTemplate ChatTemplate::parse(std::string text, std::string name) {
  ChatTemplate t;
  t.program_ = chat::parse_program(text, name);
  t.text_ = std::move(text);
  t.name_ = std::move(name);
  return t;
}

bool ChatTemplate::model_has_template(const gguf::File& f) {
  const gguf::Value* v = f.find("tokenizer.chat_template");
  return v != nullptr && v->type == gguf::ValueType::String && !v->s.empty();
}

ChatTemplate ChatTemplate::from_model(const gguf::File& f) {
  if (!model_has_template(f))
    throw FormatError(strcat(f.path(), ": no tokenizer.chat_template in the model's metadata; --chat-template NAME|FILE gives one (built in: ",
                             [] {
                               std::string s;
                               for (const auto& n : builtin_names()) s += (s.empty() ? "" : ", ") + n;
                               return s;
                             }(),
                             ")"));
  return parse(f.get_string("tokenizer.chat_template"), f.path() + " tokenizer.chat_template");
}

std::vector<std::string> ChatTemplate::builtin_names() {
  std::vector<std::string> names;
  for (const auto& b : chat::builtin_templates()) names.emplace_back(b.name);
  return names;
}

ChatTemplate ChatTemplate::builtin(std::string_view name) {
  for (const auto& b : chat::builtin_templates())
    if (b.name == name) return parse(std::string(b.text), "builtin " + std::string(name));
  std::string known;
  for (const auto& n : builtin_names()) known += (known.empty() ? "" : ", ") + n;
  throw trueno::InvalidArgument(strcat("chat template '", name, "' is not built in (built in: ", known, ")"));
}

ChatTemplate ChatTemplate::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf()) || in.bad())
    throw trueno::InvalidArgument(strcat("chat template file ", path, ": cannot be read"));
  return parse(text.str(), path);
}

ChatTemplate ChatTemplate::from_name_or_file(const std::string& name_or_path) {
  for (const auto& b : chat::builtin_templates())
    if (b.name == name_or_path) return builtin(name_or_path);
  if (name_or_path.find('/') == std::string::npos && name_or_path.find('.') == std::string::npos && !std::ifstream(name_or_path)) {
    std::string known;
    for (const auto& n : builtin_names()) known += (known.empty() ? "" : ", ") + n;
    throw trueno::InvalidArgument(strcat("--chat-template ", name_or_path, ": neither a built-in template (", known, ") nor a readable file"));
  }
  return from_file(name_or_path);
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, bool add_generation_prompt, const TemplateContext& ctx) const {
  chat::Dict g;
  chat::List msgs;
  for (const auto& m : messages) {
    chat::Dict d;
    d.set("role", m.role);
    d.set("content", m.content);
    msgs.emplace_back(std::move(d));
  }
  g.set("messages", chat::Value(std::move(msgs)));
  g.set("add_generation_prompt", add_generation_prompt);
  g.set("bos_token", ctx.bos_token);
  g.set("eos_token", ctx.eos_token);
  for (const auto& [k, v] : ctx.variables) g.set(k, v);
  return chat::render_program(*program_, std::move(g));
}

}  // namespace realizar
