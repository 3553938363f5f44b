// A program built against an installed trueno + realizar (find_package or pkg-config): a dot product
// against a plain loop, and a GGUF vocabulary's byte-level BPE tokenizer (PCRE2) round trip.
// Usage: consumer FILE.gguf; prints "consumer: ok ..." and exits 0, or names the failure and exits 1.
#include <cstdio>
#include <string>

#include <realizar/gguf.h>
#include <realizar/tokenizer.h>
#include <trueno/trueno.h>

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: consumer FILE.gguf\n"), 2;
  const std::size_t n = 1000;
  trueno::Vector x(n), y(n);
  double want = 0;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 7), y[i] = static_cast<float>(i % 5);  // exact sums in float
    want += x[i] * y[i];
  }
  const float got = trueno::Vector::dot(x, y);
  if (got != want) return std::fprintf(stderr, "consumer: dot %g, loop %g\n", got, want), 1;

  const auto file = realizar::gguf::File::open(argv[1]);
  const auto tok = realizar::Tokenizer::from_gguf(file);
  const std::string text = "Hello, y'all! 3333 F\xC3\xBChrer";
  const auto ids = tok.encode(text, false);
  if (ids.empty() || tok.decode(ids) != text)
    return std::fprintf(stderr, "consumer: '%s' -> %zu ids -> '%s'\n", text.c_str(), ids.size(), tok.decode(ids).c_str()), 1;
  std::printf("consumer: ok (dot %g on %s; %s tokenizer: %zu ids round trip)\n", got,
              std::string(trueno::name(trueno::current_backend())).c_str(), file.get_string("tokenizer.ggml.model", "?").c_str(),
              ids.size());
}
