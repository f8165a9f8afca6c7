// `tileprof view --serve`: the view page over HTTP on 127.0.0.1, for
// reports whose page is too large to be handy as one file. GET / is the
// page's shell (ViewShell: the page without its data), GET /data.json its
// data (ViewPageData, built once when the server starts), which the shell's
// script fetches; /favicon.ico, which browsers ask for, is 204 (no icon,
// and no error in the browser's console), any other path 404. Only the
// loopback address is bound, and a request naming another host (a page
// that DNS rebinding points at 127.0.0.1) is refused.
//
// A small HTTP/1.1 server on POSIX sockets (GET and HEAD, one request per
// connection, each connection on a thread of its own), not Debian's
// cpp-httplib: Debian ships that as a shared library that needs the shared
// libstdc++, OpenSSL, zlib and brotli, and linking it would load them at
// every start of `tileprof` (a program that only starts took 2.7 ms with
// it instead of 0.5; `tileprof size` is held to GNU size's ~1 ms, and
// tests/cli/startup_test.cc to no shared C++ runtime). The tests fetch
// with cpp-httplib's client, an HTTP implementation independent of this one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "analyzer/open_report.h"
#include "common/expected.h"

namespace tileprof::analyzer {

class ViewServer {
 public:
  // Listens on 127.0.0.1:`port` (0: a free port the system picks), then
  // builds the page's shell and data; `other` (may be null) adds the
  // Compare view. Errors when the port is in use (naming it) or cannot be
  // bound, or when the data cannot be built.
  static Expected<std::unique_ptr<ViewServer>> Start(const LoadedReport& report,
                                                     const LoadedReport* other, uint16_t port);
  ~ViewServer();
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;

  // The port listened on (the one chosen by the system for port 0).
  uint16_t port() const { return port_; }

  // Answers requests until Stop(); returns once every connection has
  // ended. Once per server.
  Status Serve();
  // Serve() until SIGINT or SIGTERM, handling them meanwhile (the previous
  // handlers are restored after).
  Status ServeUntilSignalled();
  // Makes Serve() return; from any thread, or a signal handler (it only
  // writes to a pipe).
  void Stop();

 private:
  ViewServer(int listen_fd, uint16_t port, int stop_read, int stop_write);
  // One connection: reads its request, answers it, closes it.
  void Answer(int fd);
  void Release(int fd);

  const int listen_fd_;
  const uint16_t port_;
  const int stop_read_, stop_write_;  // the self-pipe Stop() writes to
  std::string shell_, data_;          // what GET / and GET /data.json answer

  std::mutex mutex_;
  std::condition_variable idle_;
  std::set<int> connections_;  // open connections, shut down by the end of Serve()
};

}  // namespace tileprof::analyzer
