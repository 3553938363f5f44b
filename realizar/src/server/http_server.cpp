#include "server/http_server.h"

#include <httplib.h>

#include <atomic>
#include <ctime>
#include <random>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "trueno/error.h"

namespace realizar::server {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Set on the threads that serve a connection beyond --max-connections: they answer 503 and close.
thread_local bool t_over_limit = false;

// Note [Connection limit]
// httplib serves each connection on one thread of its task queue for the connection's whole life (a
// streaming response holds it until the stream ends). This queue has exactly max_connections threads for
// normal work, so up to that many connections stream at once and none waits in a queue behind a long
// stream; a connection beyond the limit is handed to a small overflow pool that answers 503 at once
// (pre-routing sees t_over_limit) and closes it.
class LimitedQueue : public httplib::TaskQueue {
 public:
  explicit LimitedQueue(std::size_t max) : max_(max), main_(max), overflow_(2) {}
  void enqueue(std::function<void()> fn) override {
    if (active_.fetch_add(1) < max_) {
      main_.enqueue([this, fn = std::move(fn)] {
        fn();
        --active_;
      });
    } else {
      --active_;
      overflow_.enqueue([fn = std::move(fn)] {
        t_over_limit = true;
        fn();
        t_over_limit = false;
      });
    }
  }
  void shutdown() override {
    main_.shutdown();
    overflow_.shutdown();
  }

 private:
  std::size_t max_;
  std::atomic<std::size_t> active_{0};
  httplib::ThreadPool main_, overflow_;
};

std::string random_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string s = prefix;
  for (int i = 0; i < 24; ++i) s += hex[rng() % 16];
  return s;
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
  res.set_content(dump(error_json(e)), "application/json");
}

std::string sse(const nlohmann::json& j) { return "data: " + dump(j) + "\n\n"; }

const char* metric_path(const std::string& p) {
  for (const char* known : {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics"})
    if (p == known) return known;
  return "other";
}

}  // namespace

struct HttpServer::Impl {
  Scheduler& sched;
  const Tokenizer& tok;
  Metrics& metrics;
  ServerOptions o;
  httplib::Server svr;
  std::atomic<bool> draining{false};
  std::atomic<int> in_flight{0};  // generation requests whose response is not yet written
  std::int64_t created = static_cast<std::int64_t>(std::time(nullptr));

  Impl(Scheduler& s, const Tokenizer& t, Metrics& m, ServerOptions opt) : sched(s), tok(t), metrics(m), o(std::move(opt)) {}

  void routes();
  void generate(Endpoint kind, const httplib::Request& req, httplib::Response& res);
};

// A generation request: parse, tokenize, queue; then the whole answer, or an SSE stream.
void HttpServer::Impl::generate(Endpoint kind, const httplib::Request& req, httplib::Response& res) {
  ApiRequest r;
  std::shared_ptr<Stream> st;
  try {
    if (draining) throw ApiError(503, "the server is shutting down", {}, "server_error", "shutting_down");
    r = parse_request(kind, req.body, {sched.options().max_tokens_cap});
    const bool chat = kind == Endpoint::Chat;
    // Chat: the template's special tokens (<|im_start|>) become tokens; a completion prompt is plain text.
    auto ids = tok.encode(chat ? render_chat(r.messages, true, o.chat_template.get(), o.chat_context) : r.prompt, true, chat);
    st = sched.submit(std::move(ids), r.params, chat ? "messages" : "prompt");
  } catch (const ApiError& e) {
    return send_error(res, e);
  }
  ResponseMeta meta{kind, random_id(kind == Endpoint::Chat ? "chatcmpl-" : "cmpl-"), r.model.empty() ? o.model_id : r.model,
                    static_cast<std::int64_t>(std::time(nullptr)), r.params.logprobs >= 0};
  const std::string echo = kind == Endpoint::Completion && r.echo ? r.prompt : std::string();
  if (r.stream) {
    ++in_flight;
    struct State {
      bool first = true;
      bool echoed = false;
    };
    auto state = std::make_shared<State>();
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, st, meta, state, echo, include_usage = r.include_usage](std::size_t, httplib::DataSink& sink) {
          auto send = [&](const std::string& s) {
            if (sink.write(s.data(), s.size())) return true;
            st->cancel();  // the client went away: free its stream now
            return false;
          };
          Stream::Delta d;
          if (!state->echoed) {
            d.text = echo;
            state->echoed = true;
          }
          const bool fin = st->wait(d, 1000ms);
          if (!d.text.empty() || !d.lps.empty() || (state->first && meta.kind == Endpoint::Chat)) {
            if (!send(sse(chunk_json(meta, d.text, d.lps, std::nullopt, state->first, include_usage)))) return false;
            state->first = false;
          } else if (!fin && !send(": keep-alive\n\n")) {  // also notices a client that went away while queued
            return false;
          }
          if (!fin) return true;
          if (!st->error().empty()) {
            ApiError e(st->error_status(), st->error());
            if (!send(sse(error_json(e)))) return false;
          } else {
            if (!send(sse(chunk_json(meta, "", {}, st->finish_reason(), false, include_usage)))) return false;
            if (include_usage && !send(sse(usage_chunk_json(meta, st->usage())))) return false;
          }
          if (!send("data: [DONE]\n\n")) return false;
          sink.done();
          return true;
        },
        [this, st](bool) {
          st->cancel();  // no-op when finished; frees the stream when the connection broke or the server stopped
          --in_flight;
        });
    return;
  }

  // Not streaming: the answer when it is done. A short request gets a plain response; one that runs longer
  // than a second is sent chunked with JSON whitespace every second, so that a client that went away is
  // noticed (a failed write) and its stream freed. Its status is then 200 whatever happens.
  auto acc = std::make_shared<Stream::Delta>();
  acc->text = echo;
  bool fin = false;
  const auto until = Clock::now() + 1s;
  while (!fin && Clock::now() < until) fin = st->wait(*acc, 100ms);
  auto body = [this, st, meta, acc]() {
    if (!st->error().empty()) return std::make_pair(st->error_status(), dump(error_json(ApiError(st->error_status(), st->error()))));
    return std::make_pair(200, dump(response_json(meta, acc->text, acc->lps, st->finish_reason(), st->usage())));
  };
  if (fin) {
    auto [status, text] = body();
    res.status = status;
    res.set_content(text, "application/json");
    return;
  }
  ++in_flight;
  res.set_chunked_content_provider(
      "application/json",
      [st, acc, body](std::size_t, httplib::DataSink& sink) {
        if (!st->wait(*acc, 1000ms)) {
          if (sink.write(" ", 1)) return true;
          st->cancel();
          return false;
        }
        const std::string text = body().second;
        if (!sink.write(text.data(), text.size())) return false;
        sink.done();
        return true;
      },
      [this, st](bool) {
        st->cancel();
        --in_flight;
      });
}

void HttpServer::Impl::routes() {
  svr.new_task_queue = [n = o.max_connections] { return new LimitedQueue(n); };
  svr.set_payload_max_length(o.max_body);
  svr.set_read_timeout(o.read_timeout_s, 0);
  svr.set_write_timeout(o.write_timeout_s, 0);
  svr.set_keep_alive_timeout(o.keep_alive_timeout_s);
  svr.set_tcp_nodelay(true);

  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (t_over_limit) {
      ApiError e(503, "too many connections (--max-connections " + std::to_string(o.max_connections) + "); retry later", {},
                 "server_error", "too_many_connections");
      e.retry_after_s = 1;
      send_error(res, e);
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!o.api_key.empty() && req.path.rfind("/v1/", 0) == 0) {
      const std::string auth = req.get_header_value("Authorization");
      if (auth != "Bearer " + o.api_key) {
        send_error(res, ApiError(401, auth.empty() ? "missing API key: send the header 'Authorization: Bearer <key>'" : "invalid API key", {},
                                 "authentication_error", "invalid_api_key"));
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // httplib's own errors (404, 405, 413, 400) get an OpenAI error object too.
  svr.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return httplib::Server::HandlerResponse::Unhandled;
    std::string msg = res.status == 404   ? "no route for " + req.method + " " + req.path
                      : res.status == 413 ? std::string("the request body is too large (--max-body)")
                                          : "bad request (HTTP " + std::to_string(res.status) + ")";
    res.set_content(dump(error_json(ApiError(res.status, msg))), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string msg = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      msg += std::string(": ") + e.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, msg, {}, "server_error"));
  });
  svr.set_logger([this](const httplib::Request& req, const httplib::Response& res) { metrics.count_request(metric_path(req.path), res.status); });

  svr.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { generate(Endpoint::Chat, req, res); });
  svr.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { generate(Endpoint::Completion, req, res); });
  svr.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump(models_json(o.model_id, created)), "application/json");
  });
  svr.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (draining) {
      res.status = 503;
      res.set_content(R"({"status":"shutting down"})", "application/json");
    } else {
      res.set_content(R"({"status":"ok"})", "application/json");
    }
  });
  svr.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.render(), "text/plain; version=0.0.4");
  });
}

HttpServer::HttpServer(Scheduler& sched, const Tokenizer& tok, Metrics& metrics, ServerOptions o)
    : impl_(std::make_unique<Impl>(sched, tok, metrics, std::move(o))) {
  impl_->routes();
}

HttpServer::~HttpServer() = default;

// Note [Listen backlog]
// Debian's cpp-httplib is a compiled library whose listening socket has a backlog of 5
// (CPPHTTPLIB_LISTEN_BACKLOG, fixed when the library was built): a wave of 64 clients connecting at once
// overflowed it, and the kernel reset some connections or made their SYNs wait for a retransmit (1 s,
// then 3 s), which was most of the time to first token measured at 64 clients. Linux lets listen() be
// called again on a listening socket to change its backlog, so after binding we find ours (a listening
// TCP socket on our port) among the process's descriptors and raise it to SOMAXCONN.
namespace {
int raise_listen_backlog(int port) {
  int raised = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0) continue;
    sockaddr_storage addr{};
    socklen_t alen = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0) continue;
    int p = -1;
    if (addr.ss_family == AF_INET) p = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) p = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    if (p == port && ::listen(fd, SOMAXCONN) == 0) ++raised;
  }
  return raised;
}
}  // namespace

int HttpServer::bind() {
  const int port = impl_->o.port == 0 ? impl_->svr.bind_to_any_port(impl_->o.host) : (impl_->svr.bind_to_port(impl_->o.host, impl_->o.port) ? impl_->o.port : -1);
  if (port < 0)
    throw trueno::Error("cannot listen on " + impl_->o.host + ":" + std::to_string(impl_->o.port) + " (address in use, or not an address of this machine)");
  backlog_raised_ = raise_listen_backlog(port) > 0;  // Note [Listen backlog]
  return port;
}

void HttpServer::listen() { impl_->svr.listen_after_bind(); }

std::size_t HttpServer::shutdown() {
  impl_->draining = true;
  const std::size_t cancelled = impl_->sched.drain(impl_->o.shutdown_grace);
  // The streams are finished or cancelled: give their writers a moment to send the ends.
  const auto until = Clock::now() + 2s;
  while (impl_->in_flight > 0 && Clock::now() < until) std::this_thread::sleep_for(10ms);
  impl_->svr.stop();
  return cancelled;
}

}  // namespace realizar::server
