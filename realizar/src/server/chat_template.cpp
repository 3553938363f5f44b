#include "server/chat_template.h"

namespace realizar::server {

std::string render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out;
  for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace realizar::server
