// The TCP bootstrap that hands rank 0's id to the other ranks (Note [TCP bootstrap], comm.h).
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/strings.h"
#include "trueno/comm.h"
#include "trueno/error.h"

namespace trueno {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kMagic = 0x4f4e5254;  // "TRNO"

// A socket closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

double left_s(Clock::time_point deadline) { return std::chrono::duration<double>(deadline - Clock::now()).count(); }

// Waits until fd is readable (or writable), at most until the deadline.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const double left = left_s(deadline);
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

void send_all(int fd, const void* data, std::size_t n, const std::string& what) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw Error(strcat(what, ": send failed: ", errno_text()));
    p += k, n -= static_cast<std::size_t>(k);
  }
}

void recv_all(int fd, void* data, std::size_t n, Clock::time_point deadline, const std::string& what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLIN, deadline)) throw Error(strcat(what, ": timed out waiting for data"));
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) throw Error(strcat(what, ": the other side closed the connection"));
    if (k < 0) throw Error(strcat(what, ": recv failed: ", errno_text()));
    p += k, n -= static_cast<std::size_t>(k);
  }
}

std::vector<std::byte> serve(const BootstrapOptions& o, const std::vector<std::byte>& payload, Clock::time_point deadline) {
  Fd ls(::socket(AF_INET, SOCK_STREAM, 0));
  if (ls.fd < 0) throw Error(strcat("bootstrap rank 0: socket: ", errno_text()));
  const int one = 1;
  ::setsockopt(ls.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET, a.sin_addr.s_addr = htonl(INADDR_ANY), a.sin_port = htons(static_cast<std::uint16_t>(o.port));
  if (::bind(ls.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw Error(strcat("bootstrap rank 0: cannot listen on port ", o.port, ": ", errno_text(), " (another group there? TRUENO_BOOTSTRAP=host:port)"));
  if (::listen(ls.fd, 64) != 0) throw Error(strcat("bootstrap rank 0: listen: ", errno_text()));
  socklen_t len = sizeof a;
  ::getsockname(ls.fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  if (o.on_listen) o.on_listen(port);
  std::vector<bool> joined(static_cast<std::size_t>(o.world_size), false);
  const std::uint32_t size = static_cast<std::uint32_t>(payload.size());
  for (int waiting = o.world_size - 1; waiting > 0;) {
    if (!wait_fd(ls.fd, POLLIN, deadline))
      throw Error(strcat("bootstrap rank 0 (port ", port, "): ", waiting, " of ", o.world_size - 1, " ranks did not join within ",
                         o.timeout_s, " s"));
    Fd c(::accept(ls.fd, nullptr, nullptr));
    if (c.fd < 0) continue;
    std::uint32_t hello[3];
    recv_all(c.fd, hello, sizeof hello, deadline, "bootstrap rank 0: a rank's hello");
    const std::uint32_t rank = ntohl(hello[1]), world = ntohl(hello[2]);
    if (ntohl(hello[0]) != kMagic) continue;  // not one of ours (a port scan): ignore it
    if (world != static_cast<std::uint32_t>(o.world_size))
      throw Error(strcat("bootstrap rank 0: rank ", rank, " says the world size is ", world, ", rank 0 has ", o.world_size));
    if (rank == 0 || rank >= world || joined[rank]) throw Error(strcat("bootstrap rank 0: rank ", rank, " joined twice or is out of range"));
    joined[rank] = true, --waiting;
    const std::uint32_t n = htonl(size);
    send_all(c.fd, &n, sizeof n, strcat("bootstrap rank 0 -> rank ", rank));
    send_all(c.fd, payload.data(), payload.size(), strcat("bootstrap rank 0 -> rank ", rank));
  }
  return payload;
}

// A connected socket to rank 0, retrying while it is not up yet.
Fd connect_to_root(const BootstrapOptions& o, Clock::time_point deadline) {
  const std::string where = strcat(o.address, ":", o.port);
  std::string last = "no attempt";
  while (left_s(deadline) > 0) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC, hints.ai_socktype = SOCK_STREAM;
    if (const int e = ::getaddrinfo(o.address.c_str(), std::to_string(o.port).c_str(), &hints, &res); e != 0)
      throw Error(strcat("bootstrap rank ", o.rank, ": cannot resolve ", o.address, ": ", ::gai_strerror(e)));
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
      Fd s(::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol));
      if (s.fd >= 0 && ::connect(s.fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        ::freeaddrinfo(res);
        return s;
      }
      last = errno_text();
    }
    ::freeaddrinfo(res);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 may not listen yet
  }
  throw Error(strcat("bootstrap rank ", o.rank, ": could not reach rank 0 at ", where, " within ", o.timeout_s, " s (", last,
                     "); is rank 0 running, and TRUENO_BOOTSTRAP its host:port?"));
}

std::vector<std::byte> join(const BootstrapOptions& o, Clock::time_point deadline) {
  Fd s = connect_to_root(o, deadline);
  const std::string what = strcat("bootstrap rank ", o.rank, " <- rank 0 at ", o.address, ":", o.port);
  const std::uint32_t hello[3] = {htonl(kMagic), htonl(static_cast<std::uint32_t>(o.rank)), htonl(static_cast<std::uint32_t>(o.world_size))};
  send_all(s.fd, hello, sizeof hello, what);
  std::uint32_t n = 0;
  recv_all(s.fd, &n, sizeof n, deadline, what);
  std::vector<std::byte> payload(ntohl(n));
  recv_all(s.fd, payload.data(), payload.size(), deadline, what);
  return payload;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 65535) throw InvalidArgument(strcat(name, "=", v, ": not a number in [0, 65535]"));
  return static_cast<int>(x);
}

}  // namespace

BootstrapOptions bootstrap_options_from_env(BootstrapOptions o) {
  o.rank = env_int("TRUENO_RANK", o.rank);
  o.world_size = env_int("TRUENO_WORLD_SIZE", o.world_size);
  if (const char* b = std::getenv("TRUENO_BOOTSTRAP"); b != nullptr && *b != '\0') {
    const std::string s(b);
    const std::size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) throw InvalidArgument(strcat("TRUENO_BOOTSTRAP=", s, ": expected host:port"));
    o.address = s.substr(0, colon);
    char* end = nullptr;
    const long port = std::strtol(s.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port < 0 || port > 65535) throw InvalidArgument(strcat("TRUENO_BOOTSTRAP=", s, ": the port is not a number in [0, 65535]"));
    o.port = static_cast<int>(port);
  }
  return o;
}

std::vector<std::byte> bootstrap_broadcast(const BootstrapOptions& o, const std::vector<std::byte>& payload) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    throw InvalidArgument(strcat("bootstrap: rank ", o.rank, " of a world of ", o.world_size, " is out of range"));
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_s));
  if (o.world_size == 1) return payload;
#ifdef __EMSCRIPTEN__
  // emscripten's sockets under node are not TCP between processes: a connect would wait forever.
  throw BackendUnavailable("bootstrap: no TCP sockets in the WebAssembly build (one process per GPU needs a native build)");
#endif
  return o.rank == 0 ? serve(o, payload, deadline) : join(o, deadline);
}

}  // namespace trueno
