#include "text_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trueno/error.h"

namespace realizar::cli {

std::string read_text(const std::string& path, const std::string& option) {
  const bool stdin_ = path == "-";
  const std::string where = option + " " + (stdin_ ? "- (standard input)" : path);
  const int fd = stdin_ ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw trueno::InvalidArgument(where + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (!stdin_) ::close(fd);
    throw trueno::InvalidArgument(where + ": is a directory, not a text file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      if (!stdin_) ::close(fd);
      throw trueno::InvalidArgument(where + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  if (!stdin_) ::close(fd);
  return text;
}

}  // namespace realizar::cli
