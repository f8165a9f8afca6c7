#include "analyzer/view_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>

#include "analyzer/view_page.h"

namespace tileprof::analyzer {
namespace {

// A request's head (request line and headers) larger than this is refused.
constexpr size_t kMaxRequestHead = 16 * 1024;

std::string ErrnoText(int error) { return std::system_category().message(error); }

// Sends all of `bytes`; false when the connection failed or timed out.
bool SendAll(int fd, std::string_view bytes, int flags = 0) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), flags | MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The Host header's value, or nothing when the request has none (HTTP/1.0).
std::optional<std::string_view> HostOf(std::string_view head) {
  size_t line = head.find("\r\n");
  while (line != std::string_view::npos && line + 2 < head.size()) {
    const size_t begin = line + 2, end = head.find("\r\n", begin);
    const std::string_view header = head.substr(begin, end - begin);
    const size_t colon = header.find(':');
    if (colon != std::string_view::npos && EqualsIgnoringCase(header.substr(0, colon), "host"))
      return Trim(header.substr(colon + 1));
    line = end;
  }
  return std::nullopt;
}

// True for 127.0.0.1 or localhost, on `port` (or without one when it is 80):
// a page of another site that a DNS rebinding points at 127.0.0.1 names
// its own host, and must not read the report.
bool IsOwnHost(std::string_view host, uint16_t port) {
  const size_t colon = host.rfind(':');
  const std::string_view name = host.substr(0, colon);
  if (name != "127.0.0.1" && !EqualsIgnoringCase(name, "localhost")) return false;
  if (colon == std::string_view::npos) return port == 80;
  return host.substr(colon + 1) == std::to_string(port);
}

struct Response {
  std::string_view status;  // "200 OK"
  std::string_view type;    // Content-Type
  std::string_view body;
  std::string_view extra_headers;  // each ending in \r\n
};

Response Plain(std::string_view status, std::string_view body) {
  return {status, "text/plain; charset=utf-8", body, ""};
}

// The stop pipe's write end for the signal handler of ServeUntilSignalled.
std::atomic<int> signal_stop_fd{-1};

extern "C" void StopOnSignal(int) {
  const int fd = signal_stop_fd.load();
  if (fd >= 0) {
    const ssize_t written = write(fd, "s", 1);  // async-signal-safe
    (void)written;
  }
}

}  // namespace

Expected<std::unique_ptr<ViewServer>> ViewServer::Start(const LoadedReport& report,
                                                        const LoadedReport* other, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError("cannot make a socket: {}", ErrnoText(errno));
  const int one = 1;
  // A port left in TIME_WAIT by a server just stopped can be bound again;
  // one that another server listens on cannot.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd, 64) != 0) {
    const int error = errno;
    close(fd);
    if (error == EADDRINUSE)
      return MakeError("port {} of 127.0.0.1 is in use: choose another, or 0 for any free one",
                       port);
    return MakeError("cannot listen on 127.0.0.1:{}: {}", port, ErrnoText(error));
  }
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int stop[2];
  if (pipe2(stop, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int error = errno;
    close(fd);
    return MakeError("cannot make a pipe: {}", ErrnoText(error));
  }
  std::unique_ptr<ViewServer> server(new ViewServer(fd, ntohs(address.sin_port), stop[0], stop[1]));
  Expected<nlohmann::json> data = ViewPageData(report, other);
  if (!data) return data.error();
  server->data_ = data->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  server->shell_ = ViewShell(report, other, "data.json");
  return server;
}

ViewServer::ViewServer(int listen_fd, uint16_t port, int stop_read, int stop_write)
    : listen_fd_(listen_fd), port_(port), stop_read_(stop_read), stop_write_(stop_write) {}

ViewServer::~ViewServer() {
  close(listen_fd_);
  close(stop_read_);
  close(stop_write_);
}

void ViewServer::Stop() {
  const ssize_t written = write(stop_write_, "s", 1);  // full pipe: a stop is pending anyway
  (void)written;
}

Status ViewServer::Serve() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
  Status result;
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      result = MakeError("waiting for connections: {}", ErrnoText(errno));
      break;
    }
    if (fds[1].revents != 0) break;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors or memory: wait a little rather than spin.
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    std::lock_guard lock(mutex_);
    try {
      std::thread([this, fd] { Answer(fd); }).detach();
      connections_.insert(fd);
    } catch (const std::system_error&) {
      close(fd);  // no thread to be had: the browser will retry
    }
  }
  // End the connections still open (a browser keeps idle ones) and wait
  // for their threads, which use this server.
  std::unique_lock lock(mutex_);
  for (int fd : connections_) shutdown(fd, SHUT_RDWR);
  idle_.wait(lock, [this] { return connections_.empty(); });
  return result;
}

Status ViewServer::ServeUntilSignalled() {
  struct sigaction action = {};
  action.sa_handler = StopOnSignal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int = {};
  struct sigaction old_term = {};
  signal_stop_fd.store(stop_write_);
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  Status served = Serve();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  signal_stop_fd.store(-1);
  return served;
}

void ViewServer::Answer(int fd) {
  const timeval receive_timeout{10, 0}, send_timeout{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &receive_timeout, sizeof receive_timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  std::string head;
  char buffer[4096];
  size_t end;
  while ((end = head.find("\r\n\r\n")) == std::string::npos && head.size() < kMaxRequestHead) {
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Release(fd);  // closed, reset or silent: nothing to answer
    head.append(buffer, static_cast<size_t>(got));
  }

  Response response;
  bool head_only = false;
  const std::string_view request_line = std::string_view(head).substr(0, head.find("\r\n"));
  const size_t space = request_line.find(' '), second = request_line.find(' ', space + 1);
  if (end == std::string::npos || space == std::string_view::npos ||
      second == std::string_view::npos) {
    response = Plain("400 Bad Request", "bad request\n");
  } else {
    const std::string_view method = request_line.substr(0, space);
    std::string_view path = request_line.substr(space + 1, second - space - 1);
    path = path.substr(0, path.find('?'));
    const std::optional<std::string_view> host = HostOf(std::string_view(head).substr(0, end + 2));
    head_only = method == "HEAD";
    if (method != "GET" && method != "HEAD")
      response = {"405 Method Not Allowed", "text/plain; charset=utf-8", "GET or HEAD only\n",
                  "Allow: GET, HEAD\r\n"};
    else if (host && !IsOwnHost(*host, port_))
      response = Plain("403 Forbidden", "this server answers requests for 127.0.0.1 only\n");
    else if (path == "/")
      response = {"200 OK", "text/html; charset=utf-8", shell_, ""};
    else if (path == "/data.json")
      response = {"200 OK", "application/json", data_, ""};
    else if (path == "/favicon.ico")  // asked for by browsers: none, and no error
      response = {"204 No Content", "image/x-icon", "", ""};
    else
      response = Plain("404 Not Found", "not found\n");
  }
  const std::string header = "HTTP/1.1 " + std::string(response.status) +
                             "\r\nContent-Type: " + std::string(response.type) +
                             "\r\nContent-Length: " + std::to_string(response.body.size()) +
                             "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n" +
                             std::string(response.extra_headers) + "Connection: close\r\n\r\n";
  if (SendAll(fd, header, head_only ? 0 : MSG_MORE) && !head_only) SendAll(fd, response.body);
  // Closing with unread bytes would reset the connection, and the client
  // could lose the end of the answer: end ours, and read until it ends its.
  shutdown(fd, SHUT_WR);
  while (true) {
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got > 0 || (got < 0 && errno == EINTR)) continue;
    break;
  }
  Release(fd);
}

void ViewServer::Release(int fd) {
  std::lock_guard lock(mutex_);
  close(fd);
  connections_.erase(fd);
  idle_.notify_all();
}

}  // namespace tileprof::analyzer
