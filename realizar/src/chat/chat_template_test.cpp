// Chat templates: the built-in real templates rendered against expected prompts, Jinja features one by
// one, the errors (raise_exception, unsupported constructs, with line:column) and robustness.
#include <gtest/gtest.h>

#include <random>

#include "realizar/chat_template.h"

namespace realizar {
namespace {

using chat::Value;

// llama.cpp's test conversation (tests/test-chat-template.cpp), padded assistant text included.
const std::vector<ChatMessage> kWithSystem = {
    {"system", "You are a helpful assistant"}, {"user", "Hello"},          {"assistant", "Hi there"},
    {"user", "Who are you"},                   {"assistant", "   I am an assistant   "}, {"user", "Another question"}};
const std::vector<ChatMessage> kNoSystem(kWithSystem.begin() + 1, kWithSystem.end());

std::string render(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::string bos = "<s>", std::string eos = "</s>") {
  TemplateContext ctx;
  ctx.bos_token = std::move(bos);
  ctx.eos_token = std::move(eos);
  return t.render(m, gen, ctx);
}



TEST(ChatTemplate, Llama2) {
  const auto t = ChatTemplate::builtin("llama2");
  const std::string want =
      "<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s>"
      "<s>[INST] Who are you [/INST] I am an assistant </s><s>[INST] Another question [/INST]";
  EXPECT_EQ(render(t, kWithSystem, true), want);
  EXPECT_EQ(render(t, kWithSystem, false), want);  // the template has no generation prompt
  EXPECT_EQ(render(t, kNoSystem, true), "<s>[INST] Hello [/INST] Hi there </s><s>[INST] Who are you [/INST] I am an assistant </s>"
                                         "<s>[INST] Another question [/INST]");
}

TEST(ChatTemplate, Llama3) {
  const auto t = ChatTemplate::builtin("llama3");
  const std::string body =
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|>";
  EXPECT_EQ(render(t, kWithSystem, false, "<|begin_of_text|>", "<|eot_id|>"), body);
  EXPECT_EQ(render(t, kWithSystem, true, "<|begin_of_text|>", "<|eot_id|>"), body + "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Mistral) {
  const auto t = ChatTemplate::builtin("mistral");
  const std::string want = "<s>[INST] Hello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]";
  EXPECT_EQ(render(t, kNoSystem, true), want);
  EXPECT_EQ(render(t, kNoSystem, false), want);
}

TEST(ChatTemplate, ChatmlQwen2) {
  const auto t = ChatTemplate::builtin("chatml");
  const std::string body =
      "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n"
      "<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n"
      "<|im_start|>user\nAnother question<|im_end|>\n";
  EXPECT_EQ(render(t, kWithSystem, false), body);
  EXPECT_EQ(render(t, kWithSystem, true), body + "<|im_start|>assistant\n");
  // Without a system message Qwen2 adds its default one.
  EXPECT_EQ(render(t, {{"user", "Hi"}}, true), "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                                               "<|im_start|>assistant\n");
}

TEST(ChatTemplate, Phi3) {
  const auto t = ChatTemplate::builtin("phi3");
  const std::string body =
      "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n"
      "<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n";
  EXPECT_EQ(render(t, kWithSystem, true, "<s>", "<|endoftext|>"), body + "<|assistant|>\n");
  EXPECT_EQ(render(t, kWithSystem, false, "<s>", "<|endoftext|>"), body + "<|endoftext|>");
  EXPECT_EQ(render(t, {{"system", ""}, {"user", "Hi"}}, true), "<|user|>\nHi<|end|>\n<|assistant|>\n");  // an empty system is dropped
}

TEST(ChatTemplate, Gemma) {
  const auto t = ChatTemplate::builtin("gemma");
  const std::string body =
      "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n"
      "<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n";
  EXPECT_EQ(render(t, kNoSystem, false, "<bos>", "<eos>"), body);
  EXPECT_EQ(render(t, kNoSystem, true, "<bos>", "<eos>"), body + "<start_of_turn>model\n");
}

// TinyLlama/TinyLlama-1.1B-Chat-v1.0's template: newlines between tags, so the output depends on
// trim_blocks and lstrip_blocks being on (as transformers sets them).
TEST(ChatTemplate, TinyLlamaNeedsTrimBlocks) {
  const auto t = ChatTemplate::parse(
      "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n"
      "{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n"
      "{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n"
      "{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
      "tinyllama");
  EXPECT_EQ(render(t, {{"system", "S"}, {"user", "Hello"}}, true), "<|system|>\nS</s>\n<|user|>\nHello</s>\n<|assistant|>\n");
  EXPECT_EQ(render(t, {{"system", "S"}, {"user", "Hello"}}, false), "<|system|>\nS</s>\n<|user|>\nHello</s>\n");
}

// Qwen/Qwen2.5-7B-Instruct's template (multi-line with {%- -%}, tools through tojson, message.tool_calls
// undefined for plain messages), as quoted in public training code.
constexpr const char* kQwen25 = R"({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)";

TEST(ChatTemplate, Qwen25WithTools) {
  const auto t = ChatTemplate::parse(kQwen25, "qwen2.5");
  const std::vector<ChatMessage> m = {{"system", "S"}, {"user", "Hi"}, {"assistant", "Yo"}, {"tool", "42"}};
  EXPECT_EQ(render(t, m, true), "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n"
                                "<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n<|im_start|>assistant\n");
  TemplateContext ctx;
  ctx.variables["tools"] = chat::List{chat::Dict{{{"type", "function"}, {"function", chat::Dict{{{"name", "f"}, {"parameters", chat::Dict{}}}}}}}};
  EXPECT_EQ(t.render(std::vector<ChatMessage>{{"user", "Hi"}}, false, ctx),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\nYou may call one or more "
            "functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            "{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}\n</tools>\n\nFor each function call, return a json "
            "object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
            "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

// The templates' own checks: raise_exception stops rendering with the template's message and where.
TEST(ChatTemplate, RaiseExceptionPaths) {
  const auto expect_raise = [](const char* name, const std::vector<ChatMessage>& m, const std::string& message) {
    try {
      render(ChatTemplate::builtin(name), m, true);
      ADD_FAILURE() << name << " rendered a conversation it should refuse";
    } catch (const TemplateError& e) {
      EXPECT_EQ(e.construct(), "raise_exception");
      EXPECT_EQ(e.line(), 1u);
      EXPECT_GT(e.column(), 1u);
      EXPECT_NE(std::string(e.what()).find("chat template builtin " + std::string(name) + ":1:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("the template raised: " + message), std::string::npos) << e.what();
    }
  };
  const std::string alternate = "Conversation roles must alternate user/assistant/user/assistant/...";
  expect_raise("mistral", kWithSystem, alternate);
  expect_raise("mistral", {{"user", "a"}, {"user", "b"}}, alternate);
  expect_raise("mistral", {{"user", "a"}, {"system", "b"}}, "Only user and assistant roles are supported!");
  expect_raise("gemma", kWithSystem, "System role not supported");
  expect_raise("gemma", {{"user", "a"}, {"assistant", "b"}, {"assistant", "c"}}, alternate);
  expect_raise("llama2", {{"assistant", "a"}}, alternate);
}

TEST(ChatTemplate, BuiltinNamesAndFiles) {
  EXPECT_EQ(ChatTemplate::builtin_names(), (std::vector<std::string>{"llama2", "llama3", "mistral", "chatml", "phi3", "gemma"}));
  try {
    ChatTemplate::builtin("vicuna");
    ADD_FAILURE();
  } catch (const trueno::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'vicuna' is not built in (built in: llama2, llama3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ChatTemplate::from_name_or_file("nosuchname"), trueno::InvalidArgument);
  EXPECT_THROW(ChatTemplate::from_file("/nonexistent/t.jinja"), trueno::InvalidArgument);
  EXPECT_EQ(ChatTemplate::from_name_or_file("gemma").name(), "builtin gemma");
}

}  // namespace
}  // namespace realizar
