// The chat-template seam: turns chat messages into the prompt text the model continues, with the
// server's template (the model's tokenizer.chat_template, or --chat-template NAME|FILE; realizar/
// chat_template.h), or ChatML when it has none. A template that raises (roles that do not alternate)
// is the request's fault: ApiError 400 naming the template's message.
#pragma once
#include <string>
#include <vector>

#include "realizar/chat_template.h"

namespace realizar::server {

struct ChatMessage {
  std::string role;     // system, developer, user, assistant, tool
  std::string content;  // text (content parts already joined)
};

// With tmpl == nullptr, ChatML: "<|im_start|>ROLE\nCONTENT<|im_end|>\n" per message, then
// "<|im_start|>assistant\n" when add_generation_prompt.
std::string render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt, const ChatTemplate* tmpl = nullptr,
                        const TemplateContext& ctx = {});

}  // namespace realizar::server
