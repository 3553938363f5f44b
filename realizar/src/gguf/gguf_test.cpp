// GGUF reader/writer: round trip of every value type (nested arrays too), the real files, and
// malformed files that must fail with an error naming the field and offset (never crash).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "realizar/gguf.h"
#include "support/testdata.h"

namespace realizar::gguf {
namespace {

std::vector<std::byte> small_file() {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_string_array("tokenizer.ggml.tokens", {"a", "b", ""});
  Value nested;
  nested.type = ValueType::Array, nested.elem = ValueType::Array;
  for (int k = 0; k < 2; ++k) {
    Value inner;
    inner.type = ValueType::Array, inner.elem = ValueType::I64;
    for (int i = 0; i <= k; ++i) {
      Value e;
      e.type = ValueType::I64, e.i = -1 - i;
      inner.array.push_back(e);
    }
    nested.array.push_back(inner);
  }
  w.set("test.nested", nested);
  std::vector<std::byte> data(2 * 34);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i % 7);
  data[0] = data[1] = data[34] = data[35] = std::byte{0};  // zero f16 scales
  w.add_tensor("t.q8", {32, 2}, trueno::QuantType::Q8_0, data);
  w.add_tensor("t.f32", {3}, trueno::QuantType::F32, std::vector<std::byte>(12, std::byte{1}));
  return w.bytes();
}

TEST(Gguf, WriterRoundTripsEveryValue) {
  const auto bytes = small_file();
  const File f = File::parse(bytes);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count"), 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("llama.rope.freq_base")), 10000.0f);
  EXPECT_EQ(f.at("tokenizer.ggml.tokens").array.size(), 3u);
  const Value& n = f.at("test.nested");
  ASSERT_EQ(n.array.size(), 2u);
  EXPECT_EQ(n.array[1].array[1].i, -2);
  ASSERT_EQ(f.tensors().size(), 2u);
  const TensorInfo* t = f.find_tensor("t.q8");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->bytes, 68u);
  EXPECT_EQ(t->rows(), 2u);
  EXPECT_EQ(std::memcmp(t->data.data(), bytes.data() + f.data_offset() + t->offset, 68), 0);
  EXPECT_EQ(f.data_offset() % 32, 0u);
}

TEST(Gguf, ReadsTheRealModels) {
  for (const char* name : {"stories260K.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const File f = File::open(test::testdata_dir() + "/models/" + name);
    EXPECT_GT(f.tensors().size(), 10u) << name;
    EXPECT_NE(f.find("general.architecture"), nullptr) << name;
  }
}

void expect_error(std::vector<std::byte> bytes, const std::string& needle) {
  try {
    (void)File::parse(bytes, "bad.gguf");
    ADD_FAILURE() << "no error, wanted one containing '" << needle << "'";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

template <class T>
void poke(std::vector<std::byte>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

TEST(Gguf, MalformedFilesNameTheFieldAndOffset) {
  const auto good = small_file();
  expect_error({}, "magic at offset 0");
  auto b = good;
  poke<std::uint32_t>(b, 0, 0x12345678);
  expect_error(b, "not a GGUF file");
  b = good, poke<std::uint32_t>(b, 4, 7);
  expect_error(b, "version 7 is not supported");
  b = good, poke<std::uint64_t>(b, 16, std::uint64_t{1} << 60);
  expect_error(b, "metadata count at offset 16");
  b = good, poke<std::uint64_t>(b, 8, std::uint64_t{1} << 60);
  expect_error(b, "tensor count");
  b = good, poke<std::uint64_t>(b, 24, std::uint64_t{1} << 40);  // first key's length
  expect_error(b, "metadata key #0 at offset 24: string of 1099511627776 bytes");
  b = good, poke<std::uint32_t>(b, 24 + 8 + 20, 99);  // type of the first value
  expect_error(b, "unknown value type id 99");
  expect_error(std::vector<std::byte>(good.begin(), good.begin() + 200), "bad.gguf: value of 'tokenizer.ggml.tokens' at offset");
  expect_error(std::vector<std::byte>(good.begin(), good.begin() + 20), "metadata count at offset 16: needs 8 bytes, the file ends");
  expect_error(std::vector<std::byte>(good.begin(), good.end() - 40), "extends past the end of the file");
}

TEST(Gguf, DuplicatesBadShapesAndTypesAreRejected) {
  {
    Writer w;
    w.add_tensor("x", {32}, trueno::QuantType::F32, std::vector<std::byte>(128));
    w.add_tensor("x", {32}, trueno::QuantType::F32, std::vector<std::byte>(128));
    expect_error(w.bytes(), "duplicate tensor name");
  }
  Writer w;
  w.add_tensor("q", {32}, trueno::QuantType::Q8_0, std::vector<std::byte>(34));
  auto b = w.bytes();
  // Tensor directory: name (8 + 1), n_dims (4), ne[0] (8), type (4), offset (8), right after the header.
  const std::size_t at_ne0 = 24 + 9 + 4, at_type = at_ne0 + 8, at_off = at_type + 4;
  auto c = b;
  poke<std::uint64_t>(c, at_ne0, 33);
  expect_error(c, "ne[0] = 33 is not a multiple of the q8_0 block size 32");
  c = b, poke<std::uint32_t>(c, at_type, 77);
  expect_error(c, "tensor 'q' type at offset");
  c = b, poke<std::uint64_t>(c, at_off, 3);
  expect_error(c, "is not a multiple of the alignment 32");
  c = b, poke<std::uint64_t>(c, at_ne0, std::uint64_t{1} << 39), poke<std::uint32_t>(c, at_ne0 - 4, 1);
  expect_error(c, "extends past the end of the file");
}

// Random corruption of a real file: every outcome is a parse or a FormatError, never a crash.
TEST(Gguf, RandomCorruptionNeverCrashes) {
  const File real = File::open(test::testdata_dir() + "/models/stories260K.gguf");
  std::vector<std::byte> bytes(real.file_size());
  std::memcpy(bytes.data(), real.tensors()[0].data.data() - real.data_offset() - real.tensors()[0].offset, bytes.size());
  const std::uint64_t seed = test::seed();
  std::printf("corruption seed %llu (TRUENO_TEST_SEED)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  int errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto b = bytes;
    const std::size_t header = std::min<std::size_t>(b.size(), real.data_offset());
    for (int k = 0; k < 4; ++k) b[rng() % header] = static_cast<std::byte>(rng());
    if (trial % 3 == 0) b.resize(rng() % b.size());
    try {
      (void)File::parse(b);
    } catch (const FormatError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace realizar::gguf
