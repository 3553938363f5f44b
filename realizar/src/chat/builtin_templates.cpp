// The built-in templates (`--chat-template NAME`): each is the model's own `chat_template` text from
// its tokenizer_config.json on the Hugging Face Hub, as cited, byte for byte (raw strings: a `\n`
// here is a backslash and an n inside a Jinja string literal, exactly as the JSON decodes to).
#include "chat/builtin_templates.h"

namespace realizar::chat {
namespace {

// meta-llama/Llama-2-7b-chat-hf, tokenizer_config.json "chat_template".
constexpr const char* kLlama2 =
    R"({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})";

// meta-llama/Meta-Llama-3-8B-Instruct, tokenizer_config.json "chat_template" (the revision of May 2024
// with add_generation_prompt). The JSON's "\n" are real newlines in the template.
constexpr const char* kLlama3 =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
    "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

// mistralai/Mistral-7B-Instruct-v0.2, tokenizer_config.json "chat_template" (the one llama.cpp's
// tests/test-chat-template.cpp quotes): user/assistant only, strictly alternating.
constexpr const char* kMistral =
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation "
    "roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + "
    "' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and "
    "assistant roles are supported!') }}{% endif %}{% endfor %}";

// Qwen/Qwen2-7B-Instruct, tokenizer_config.json "chat_template": ChatML with a default system message.
constexpr const char* kChatml =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful "
    "assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// microsoft/Phi-3.5-mini-instruct, tokenizer_config.json "chat_template" (as in llama.cpp's
// models/templates/microsoft-Phi-3.5-mini-instruct.jinja).
constexpr const char* kPhi3 =
    "{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>\n' + message['content'] + "
    "'<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == "
    "'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";

// google/gemma-2-2b-it, tokenizer_config.json "chat_template" (as in llama.cpp's
// models/templates/google-gemma-2-2b-it.jinja): no system role, strictly alternating.
constexpr const char* kGemma =
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in "
    "messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = "
    "message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if "
    "add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";

constexpr BuiltinTemplate kAll[] = {
    {"llama2", kLlama2}, {"llama3", kLlama3}, {"mistral", kMistral}, {"chatml", kChatml}, {"phi3", kPhi3}, {"gemma", kGemma},
};

}  // namespace

std::span<const BuiltinTemplate> builtin_templates() { return kAll; }

}  // namespace realizar::chat
