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
