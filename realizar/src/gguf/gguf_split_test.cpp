// Split GGUF models (Note [Split GGUF files]): stories260K written as 3 parts in llama.cpp's gguf-split
// layout opens from its first part with every tensor's bytes and the same logits; opening a later part, a
// missing part and parts that disagree are errors naming what to do.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "realizar/gguf.h"
#include "realizar/model.h"
#include "support/testdata.h"

namespace realizar::gguf {
namespace {

namespace fs = std::filesystem;

Value integer(ValueType t, std::uint64_t v) {
  Value x;
  x.type = t, x.u = v, x.i = static_cast<std::int64_t>(v);
  return x;
}

std::string part_path(const std::string& prefix, int no, int count) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "-%05d-of-%05d.gguf", no, count);
  return prefix + buf;
}

// Writes src as count parts (part 1: every metadata key) under dir; the parts' paths.
std::vector<std::string> write_split(const File& src, const std::string& prefix, int count, int no_of_part2 = 1) {
  const auto& tensors = src.tensors();
  std::vector<std::string> paths;
  for (int p = 0; p < count; ++p) {
    Writer w;
    if (p == 0)
      for (const auto& [key, value] : src.metadata()) w.set(key, value);
    w.set("split.no", integer(ValueType::U16, p == 1 ? no_of_part2 : p));
    w.set("split.count", integer(ValueType::U16, count));
    w.set("split.tensors.count", integer(ValueType::I32, tensors.size()));
    for (std::size_t i = p; i < tensors.size(); i += count) {  // interleaved: every part gets some of each kind
      const auto& t = tensors[i];
      w.add_tensor(t.name, t.ne, t.type, std::vector<std::byte>(t.data.begin(), t.data.end()));
    }
    paths.push_back(part_path(prefix, p + 1, count));
    w.write(paths.back());
  }
  return paths;
}

template <class E>
void expect_error(const std::string& path, const std::string& needle) {
  try {
    (void)File::open(path);
    ADD_FAILURE() << path << ": no error, wanted one containing '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

std::vector<float> greedy_logits(const File& f) {
  const Model m(f, Config::from_gguf(f));
  Session s(m, 16);
  const std::vector<std::int32_t> tokens = {1, 403, 407, 261, 378};  // BOS and a few ids of its 512
  s.forward(tokens);
  return {s.logits().begin(), s.logits().end()};
}

class GgufSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("realizar-split-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  const std::string model_ = test::testdata_dir() + "/models/stories260K.gguf";
};

TEST_F(GgufSplit, FirstPartOpensTheWholeModel) {
  const File whole = File::open(model_);
  const auto paths = write_split(whole, (dir_ / "s260").string(), 3);
  const File split = File::open(paths[0]);
  EXPECT_EQ(split.split_parts(), 3u);
  ASSERT_EQ(split.tensors().size(), whole.tensors().size());
  for (const auto& t : whole.tensors()) {
    const TensorInfo* s = split.find_tensor(t.name);
    ASSERT_NE(s, nullptr) << t.name;
    ASSERT_EQ(s->bytes, t.bytes) << t.name;
    EXPECT_EQ(std::memcmp(s->data.data(), t.data.data(), t.bytes), 0) << t.name;
  }
  std::uint64_t total = 0;
  for (const auto& p : paths) total += fs::file_size(p);
  EXPECT_EQ(split.file_size(), total);
  EXPECT_EQ(greedy_logits(split), greedy_logits(whole));
}

TEST_F(GgufSplit, ALaterPartMissingPartOrMismatchIsNamed) {
  const File whole = File::open(model_);
  const auto paths = write_split(whole, (dir_ / "s260").string(), 3);
  expect_error<FormatError>(paths[1], "open its first part (...-00001-of-00003.gguf)");
  fs::remove(paths[2]);
  expect_error<trueno::InvalidArgument>(paths[0], "split part 3 of 3 is missing");
  const auto bad = write_split(whole, (dir_ / "bad").string(), 2, /*no_of_part2=*/0);
  expect_error<FormatError>(bad[0], "split.no 0 of split.count 2, want part 1 of 2");
  const fs::path renamed = dir_ / "renamed.gguf";
  fs::copy_file(bad[0], renamed);
  expect_error<FormatError>(renamed.string(), "the name does not end in -00001-of-00002.gguf");
}

}  // namespace
}  // namespace realizar::gguf
