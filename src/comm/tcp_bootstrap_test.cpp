// The TCP bootstrap (Note [TCP bootstrap], comm.h) over 127.0.0.1: an NCCL-sized id from rank 0 to the
// other ranks as threads and as a second process, and the errors that name what went wrong.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <future>
#include <thread>

#include "trueno/comm.h"
#include "trueno/error.h"

namespace trueno {
namespace {

// The WebAssembly build has no TCP sockets: bootstrap_broadcast says so (WasmSaysWhy), the socket tests skip.
#ifdef __EMSCRIPTEN__
#define TRUENO_REQUIRE_SOCKETS() GTEST_SKIP() << "skipped: the WebAssembly build has no TCP sockets (TcpBootstrap.WasmSaysWhy checks the error)"
TEST(TcpBootstrap, WasmSaysWhy) {
  BootstrapOptions o;
  o.rank = 1, o.world_size = 2, o.port = 1, o.timeout_s = 1;
  EXPECT_THROW(bootstrap_broadcast(o, {}), BackendUnavailable);
}
#else
#define TRUENO_REQUIRE_SOCKETS() (void)0
#endif

std::vector<std::byte> fake_id() {  // the size of an ncclUniqueId
  std::vector<std::byte> id(128);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::byte>(i * 37 + 11);
  return id;
}

TEST(TcpBootstrap, RankZeroReachesEveryRankAsThreads) {
  TRUENO_REQUIRE_SOCKETS();
  constexpr int kWorld = 4;
  std::promise<int> port;
  std::shared_future<int> known = port.get_future().share();
  std::vector<std::vector<std::byte>> got(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kWorld; ++r)
    ranks.emplace_back([&, r] {
      BootstrapOptions o;
      o.rank = r, o.world_size = kWorld, o.port = 0, o.timeout_s = 20;
      if (r == 0) o.on_listen = [&](int p) { port.set_value(p); };
      else o.port = known.get();
      got[r] = bootstrap_broadcast(o, r == 0 ? fake_id() : std::vector<std::byte>{});
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kWorld; ++r) EXPECT_EQ(got[r], fake_id()) << "rank " << r;
}

TEST(TcpBootstrap, RankOneInAnotherProcess) {
  TRUENO_REQUIRE_SOCKETS();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // rank 1: learns the port from the pipe, as a launcher would pass TRUENO_BOOTSTRAP
    ::close(pipe_fds[1]);
    int port = 0;
    if (::read(pipe_fds[0], &port, sizeof port) != sizeof port) ::_exit(2);
    try {
      BootstrapOptions o;
      o.rank = 1, o.world_size = 2, o.port = port, o.timeout_s = 20;
      ::_exit(bootstrap_broadcast(o, {}) == fake_id() ? 0 : 1);
    } catch (...) {
      ::_exit(3);
    }
  }
  ::close(pipe_fds[0]);
  BootstrapOptions o;
  o.world_size = 2, o.port = 0, o.timeout_s = 20;
  o.on_listen = [&](int p) { ASSERT_EQ(::write(pipe_fds[1], &p, sizeof p), static_cast<ssize_t>(sizeof p)); };
  EXPECT_EQ(bootstrap_broadcast(o, fake_id()), fake_id());
  ::close(pipe_fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "rank 1's exit code: 1 wrong payload, 2 no port, 3 an exception";
}

// A port nobody listens on: bound, then closed.
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET, a.sin_addr.s_addr = htonl(INADDR_LOOPBACK), a.sin_port = 0;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

TEST(TcpBootstrap, NoRankZeroNamesTheAddress) {
  TRUENO_REQUIRE_SOCKETS();
  BootstrapOptions o;
  o.rank = 1, o.world_size = 2, o.port = free_port(), o.timeout_s = 0.3;
  try {
    bootstrap_broadcast(o, {});
    FAIL() << "joined nobody";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not reach rank 0 at 127.0.0.1:" + std::to_string(o.port)), std::string::npos) << e.what();
  }
}

TEST(TcpBootstrap, RankZeroRefusesAnotherWorldSize) {
  TRUENO_REQUIRE_SOCKETS();
  std::promise<int> port;
  auto known = port.get_future();
  std::string rank0_error;
  std::thread root([&] {
    BootstrapOptions o;
    o.world_size = 2, o.port = 0, o.timeout_s = 20;
    o.on_listen = [&](int p) { port.set_value(p); };
    try {
      bootstrap_broadcast(o, fake_id());
    } catch (const Error& e) {
      rank0_error = e.what();
    }
  });
  BootstrapOptions o;
  o.rank = 1, o.world_size = 3, o.port = known.get(), o.timeout_s = 20;
  EXPECT_THROW(bootstrap_broadcast(o, {}), Error);
  root.join();
  EXPECT_NE(rank0_error.find("rank 1 says the world size is 3, rank 0 has 2"), std::string::npos) << rank0_error;
}

TEST(TcpBootstrap, OptionsFromTheEnvironment) {
  ::setenv("TRUENO_RANK", "3", 1), ::setenv("TRUENO_WORLD_SIZE", "8", 1), ::setenv("TRUENO_BOOTSTRAP", "node0.example:29611", 1);
  const BootstrapOptions o = bootstrap_options_from_env();
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.world_size, 8);
  EXPECT_EQ(o.address, "node0.example");
  EXPECT_EQ(o.port, 29611);
  ::setenv("TRUENO_BOOTSTRAP", "node0.example", 1);
  EXPECT_THROW(bootstrap_options_from_env(), InvalidArgument);
  ::unsetenv("TRUENO_RANK"), ::unsetenv("TRUENO_WORLD_SIZE"), ::unsetenv("TRUENO_BOOTSTRAP");
}

}  // namespace
}  // namespace trueno
