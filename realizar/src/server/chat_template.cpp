#include "server/chat_template.h"

#include "server/openai.h"

namespace realizar::server {

std::string render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt, const ChatTemplate* tmpl,
                        const TemplateContext& ctx) {
  if (tmpl != nullptr) {
    std::vector<realizar::ChatMessage> m;
    for (const auto& x : messages) m.push_back({x.role, x.content});
    try {
      return tmpl->render(m, add_generation_prompt, ctx);
    } catch (const TemplateError& e) {
      throw ApiError(400, e.what(), "messages");
    }
  }
  std::string out;
  for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace realizar::server
