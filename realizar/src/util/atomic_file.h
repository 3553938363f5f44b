// Writing a file so that it holds either its old content or the whole new one: bytes go to a temporary
// file in the same folder, renamed over the target only after every write, fsync and close succeeded.
// The rename swaps names and never truncates the old inode, so a process that has the old file mapped
// (a model in use) keeps reading intact pages. A symlink's target is replaced; a path that is not a
// regular file (/dev/null, a FIFO) is written directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace realizar {

class AtomicFile {
 public:
  // Creates the temporary sibling of path; throws trueno::InvalidArgument naming path and the reason.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless commit() succeeded

  // Throws naming path, the bytes written so far and the reason (e.g. "No space left on device").
  void write(const void* data, std::size_t bytes);
  void commit();
  std::uint64_t written() const { return written_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::string path_, target_, tmp_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
  bool committed_ = false;
};

// True when a and b name the same existing file (same device and inode): a command must not write its
// output over its own input.
bool same_file(const std::string& a, const std::string& b);

}  // namespace realizar
