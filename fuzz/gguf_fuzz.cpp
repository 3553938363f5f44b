// Fuzzes everything that reads an untrusted GGUF file: the reader's validation, then the model
// configuration, weight views, a one-token forward pass and the tokenizer on whatever parses. The
// only acceptable failure is a trueno::Error (FormatError and friends); anything else (a crash, a
// sanitizer report, std::bad_alloc from a huge allocation, another exception) is a finding.
#include <cstddef>
#include <cstdint>

#include "realizar/gguf.h"
#include "realizar/model.h"
#include "realizar/tokenizer.h"
#include "trueno/threads.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace realizar;
  static const bool one_thread = (trueno::set_num_threads(1), true);
  (void)one_thread;
  try {
    const auto file = gguf::File::parse({reinterpret_cast<const std::byte*>(data), size}, "fuzz.gguf");
    try {
      const Model model(file, Config::from_gguf(file));
      Session session(model, 2);
      const std::int32_t token = 0;
      session.forward(std::span(&token, 1));
    } catch (const trueno::Error&) {
    }
    try {
      const auto tok = Tokenizer::from_gguf(file);
      const auto ids = tok.encode("Hello world, 123 \xF0\x9F\xA6\x99 <s>", true, true);
      (void)tok.decode(ids);
    } catch (const trueno::Error&) {
    }
  } catch (const trueno::Error&) {
  }
  return 0;
}
