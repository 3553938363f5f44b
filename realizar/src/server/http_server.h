// The HTTP layer (cpp-httplib): routes, the API key, limits (body size, connections, timeouts), SSE streaming,
// errors as OpenAI error objects, and the graceful shutdown. Generation is the Scheduler's.
#pragma once
#include "realizar/chat_template.h"
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "realizar/tokenizer.h"
#include "server/metrics.h"
#include "server/openai.h"
#include "server/scheduler.h"

namespace realizar::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (bind() says which)
  std::string api_key;               // empty: no authentication
  std::string model_id = "realizar";
  std::size_t max_body = 1 << 20;    // bytes; more: 413
  std::size_t max_connections = 512; // open connections served at once (one thread each); more: 503
  int read_timeout_s = 10, write_timeout_s = 10, keep_alive_timeout_s = 2;
  std::chrono::milliseconds shutdown_grace{10000};  // in-flight streams may finish within this
  std::shared_ptr<const ChatTemplate> chat_template;  // null: ChatML (server/chat_template.h)
  TemplateContext chat_context;                       // bos_token, eos_token
};

class HttpServer {
 public:
  HttpServer(Scheduler& sched, const Tokenizer& tok, Metrics& metrics, ServerOptions o);
  ~HttpServer();
  // Binds the listening socket; returns the port. Throws naming the host and port when it cannot.
  int bind();
  // Serves until shutdown() (blocks).
  void listen();
  // Stops accepting work (503), lets in-flight streams finish within shutdown_grace, cancels the rest,
  // then stops listening. Returns the number of cancelled streams. Safe from another thread.
  std::size_t shutdown();
  // Whether bind() raised the listening socket's backlog to SOMAXCONN (Note [Listen backlog]).
  bool backlog_raised() const { return backlog_raised_; }

 private:
  bool backlog_raised_ = false;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace realizar::server
