// Chat templates: the Jinja text a model ships in `tokenizer.chat_template` (or a built-in one) turns
// a conversation into the prompt text the model was trained on. realizar implements the Jinja subset
// real templates use (Note [Jinja subset], src/chat/parser.cpp), with transformers' settings
// (trim_blocks, lstrip_blocks, loop controls, raise_exception, tojson without ASCII escapes).
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "realizar/chat_value.h"
#include "realizar/gguf.h"
#include "trueno/error.h"

namespace realizar {

// A template that cannot be parsed or rendered: names the template, the line and column (1-based), and
// the construct (e.g. "filter 'wordwrap'", "raise_exception", "tag 'include'").
class TemplateError : public trueno::Error {
 public:
  TemplateError(const std::string& source, std::size_t line, std::size_t column, std::string construct,
                const std::string& message);
  std::size_t line() const { return line_; }
  std::size_t column() const { return column_; }
  const std::string& construct() const { return construct_; }

 private:
  std::size_t line_, column_;
  std::string construct_;
};

struct ChatMessage {
  std::string role;     // "system", "user", "assistant", "tool", ...
  std::string content;
};

struct TemplateContext {
  std::string bos_token, eos_token;
  // More variables for the template (e.g. "tools", "date_string", "enable_thinking").
  std::map<std::string, chat::Value> variables;
};

namespace chat {
struct Program;  // the parsed template (src/chat/ast.h)
}

class ChatTemplate {
 public:
  // Parses text now: a syntax error or an unsupported construct throws TemplateError. `name` is how
  // errors name the template (a file path, "tokenizer.chat_template", "builtin llama3").
  static ChatTemplate parse(std::string text, std::string name);
  // The model's `tokenizer.chat_template`; FormatError when the file has none.
  static ChatTemplate from_model(const gguf::File& f);
  static bool model_has_template(const gguf::File& f);
  // One of builtin_names(); trueno::InvalidArgument naming the known ones otherwise.
  static ChatTemplate builtin(std::string_view name);
  static std::vector<std::string> builtin_names();
  // The file's text; trueno::InvalidArgument naming the path when it cannot be read.
  static ChatTemplate from_file(const std::string& path);
  // NAME of a built-in template, else a file path (`--chat-template NAME|FILE`).
  static ChatTemplate from_name_or_file(const std::string& name_or_path);

  // The prompt text for messages; add_generation_prompt opens the assistant's turn. Throws
  // TemplateError (raise_exception, a type error, an undefined variable used as a value).
  std::string render(std::span<const ChatMessage> messages, bool add_generation_prompt, const TemplateContext& ctx) const;

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

 private:
  ChatTemplate() = default;
  std::string text_, name_;
  std::shared_ptr<const chat::Program> program_;
};

}  // namespace realizar
