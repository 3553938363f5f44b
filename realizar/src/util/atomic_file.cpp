#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "trueno/error.h"
#include "util/strcat.h"

namespace realizar {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {  // /dev/null, a FIFO, a terminal: written in place, never replaced
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail("cannot open", errno);
    return;
  }
  if (char* real = exists ? ::realpath(path_.c_str(), nullptr) : nullptr) {  // a symlink: replace its target
    target_ = real;
    std::free(real);
  } else {
    target_ = path_;
  }
  const std::size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  if (base.empty()) throw trueno::InvalidArgument(strcat(path_, ": cannot write: not a file name"));
  std::vector<char> name(dir.begin(), dir.end());
  const std::string tail = "." + base + ".tmp.XXXXXX";
  name.insert(name.end(), tail.begin(), tail.end());
  name.push_back('\0');
  fd_ = mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot create a temporary file beside it", errno);
  tmp_ = name.data();
  // mkstemp makes 0600; give the file the old file's mode, or what a plain create would (0666 & ~umask).
  mode_t mode = st.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  (void)::fchmod(fd_, mode);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  const std::string after = written_ > 0 ? strcat(" after ", written_, " bytes") : std::string();
  throw trueno::InvalidArgument(strcat(path_, ": ", what, after, ": ", std::strerror(err), "; the file was not changed"));
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write failed", n < 0 ? errno : EIO);
    p += n, bytes -= static_cast<std::size_t>(n), written_ += static_cast<std::uint64_t>(n);
  }
}

void AtomicFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (tmp_.empty()) {  // not a regular file: nothing to rename
    if (::close(fd) != 0) fail("write failed", errno);
    committed_ = true;
    return;
  }
  const int synced = ::fsync(fd) == 0 ? 0 : errno;  // the rename must not publish bytes a crash could lose
  if (::close(fd) != 0 || synced != 0) fail("write failed", synced != 0 ? synced : errno);
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail(strcat("cannot rename ", tmp_, " to it"), errno);
  committed_ = true;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace realizar
