// The chat-template seam: turns chat messages into the prompt text the model continues. For now a built-in
// ChatML rendering; the model's own Jinja template (tokenizer.chat_template) replaces this function when the
// template renderer lands. Keep every caller going through render_chat().
#pragma once
#include <string>
#include <vector>

namespace realizar::server {

struct ChatMessage {
  std::string role;     // system, developer, user, assistant, tool
  std::string content;  // text (content parts already joined)
};

// ChatML: "<|im_start|>ROLE\nCONTENT<|im_end|>\n" per message, then "<|im_start|>assistant\n" when
// add_generation_prompt.
std::string render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt);

}  // namespace realizar::server
