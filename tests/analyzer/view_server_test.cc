// `tileprof view --serve` (analyzer/view_server.h), fetched with Debian's
// cpp-httplib client, an HTTP implementation independent of the server's:
// GET / is the page of `tileprof view` without its data (and a data-src),
// GET /data.json is that data, the same JSON as the page embeds;
// /favicon.ico is 204 and anything else 404, other methods and other hosts are refused, a port in
// use is an error naming it, and stopping ends idle connections too.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "analyzer/view_page.h"
#include "analyzer/view_server.h"
#include "analyzer_fixtures.h"

namespace tileprof::analyzer {
namespace {

using namespace testing;  // NOLINT: the fixtures
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

LoadedReport Open(const std::string& path) {
  auto loaded = OpenReport(path);
  EXPECT_TRUE(loaded) << loaded.error().message();
  return loaded ? std::move(*loaded) : LoadedReport{};
}

// A server on a port the system picks, serving on a thread until the end
// of the scope.
class Serving {
 public:
  Serving(const LoadedReport& report, const LoadedReport* other) {
    auto started = ViewServer::Start(report, other, 0);
    if (!started) ADD_FAILURE() << started.error().message();
    if (!started) return;
    server_ = std::move(*started);
    thread_ = std::thread([this] { served_ = server_->Serve(); });
  }
  ~Serving() { EXPECT_TRUE(Stop()) << "Serve() failed"; }
  // Stops the server and waits for Serve() to return: what it returned.
  bool Stop() {
    if (!thread_.joinable()) return static_cast<bool>(served_);
    server_->Stop();
    thread_.join();
    return static_cast<bool>(served_);
  }
  uint16_t port() const { return server_ ? server_->port() : 0; }

 private:
  std::unique_ptr<ViewServer> server_;
  std::thread thread_;
  Status served_;
};

TEST(ViewServer, ServesTheShellAndTheDataOfThePage) {
  LoadedReport loaded = Open(OomSample().paths.at("json"));
  Serving serving(loaded, nullptr);
  ASSERT_NE(serving.port(), 0);
  httplib::Client client("127.0.0.1", serving.port());

  auto shell = client.Get("/");
  ASSERT_TRUE(shell) << httplib::to_string(shell.error());
  EXPECT_EQ(shell->status, 200);
  EXPECT_THAT(shell->get_header_value("Content-Type"), StartsWith("text/html"));
  // The file's page, its data element emptied and given a data-src.
  const std::string page = ViewPage(loaded, nullptr).value();
  const std::string open = "<script type=\"application/json\" id=\"tileprof-data\">";
  const size_t begin = page.find(open), end = page.find("</script>", begin);
  ASSERT_NE(begin, std::string::npos);
  EXPECT_EQ(shell->body, page.substr(0, begin) +
                             "<script type=\"application/json\" id=\"tileprof-data\" "
                             "data-src=\"data.json\">" +
                             page.substr(end));
  EXPECT_THAT(shell->body, HasSubstr("<script type=\"application/json\" id=\"tileprof-data\" "
                                     "data-src=\"data.json\"></script>"));

  auto data = client.Get("/data.json");
  ASSERT_TRUE(data) << httplib::to_string(data.error());
  EXPECT_EQ(data->status, 200);
  EXPECT_EQ(data->get_header_value("Content-Type"), "application/json");
  const json served = json::parse(data->body);
  EXPECT_EQ(served["report"], ViewData(loaded).value());
  EXPECT_EQ(served, ViewPageData(loaded, nullptr).value());
  EXPECT_FALSE(served.contains("other"));
  // The page embeds the same object.
  EXPECT_EQ(served, json::parse(page.substr(begin + open.size(), end - begin - open.size())));

  auto head = client.Head("/data.json");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(data->body.size()));
  EXPECT_TRUE(head->body.empty());

  auto with_query = client.Get("/?view=memory");
  ASSERT_TRUE(with_query);
  EXPECT_EQ(with_query->status, 200);
  auto icon = client.Get("/favicon.ico");  // a browser asks: no icon, and no error
  ASSERT_TRUE(icon);
  EXPECT_EQ(icon->status, 204);
  for (const char* path : {"/nothing", "/data.json/", "/index.html", "/../data.json"}) {
    auto missing = client.Get(path);
    ASSERT_TRUE(missing) << path;
    EXPECT_EQ(missing->status, 404) << path;
  }
  auto post = client.Post("/data.json", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_TRUE(serving.Stop());
}

// A page of another site that a DNS rebinding points at 127.0.0.1 names its
// own host: it is refused the report.
TEST(ViewServer, AnswersOnlyRequestsForItsOwnHost) {
  LoadedReport loaded = Open(OomSample().paths.at("json"));
  Serving serving(loaded, nullptr);
  httplib::Client client("127.0.0.1", serving.port());
  const std::string port = std::to_string(serving.port());
  for (const std::string& host : {"127.0.0.1:" + port, "localhost:" + port}) {
    auto ok = client.Get("/data.json", httplib::Headers{{"Host", host}});
    ASSERT_TRUE(ok) << host;
    EXPECT_EQ(ok->status, 200) << host;
  }
  for (const std::string& host : {"attacker.example:" + port, std::string("attacker.example"),
                                  "127.0.0.1:" + std::to_string(serving.port() + 1)}) {
    auto refused = client.Get("/data.json", httplib::Headers{{"Host", host}});
    ASSERT_TRUE(refused) << host;
    EXPECT_EQ(refused->status, 403) << host;
    EXPECT_THAT(refused->body, Not(HasSubstr("report")));
  }
}

TEST(ViewServer, CompareServesBothReports) {
  LoadedReport a = Open(OomSample().paths.at("json"));
  LoadedReport b = Open(AdderSample().paths.at("json"));
  Serving serving(a, &b);
  httplib::Client client("127.0.0.1", serving.port());
  auto data = client.Get("/data.json");
  ASSERT_TRUE(data);
  const json served = json::parse(data->body);
  EXPECT_EQ(served["report"], ViewData(a).value());
  EXPECT_EQ(served["other"], ViewData(b).value());
  EXPECT_TRUE(served["compare"].contains("totals"));
  auto shell = client.Get("/");
  ASSERT_TRUE(shell);
  EXPECT_THAT(shell->body, HasSubstr(" vs "));  // the title names both
}

TEST(ViewServer, APortInUseIsAnErrorNamingIt) {
  LoadedReport loaded = Open(AdderSample().paths.at("json"));
  Serving serving(loaded, nullptr);
  auto second = ViewServer::Start(loaded, nullptr, serving.port());
  ASSERT_FALSE(second);
  EXPECT_THAT(second.error().message(), HasSubstr(std::to_string(serving.port())));
  EXPECT_THAT(second.error().message(), HasSubstr("in use"));
}

// A browser keeps idle connections open; stopping must not wait for them.
TEST(ViewServer, StoppingEndsIdleConnections) {
  LoadedReport loaded = Open(AdderSample().paths.at("json"));
  auto started = ViewServer::Start(loaded, nullptr, 0);
  ASSERT_TRUE(started) << started.error().message();
  ViewServer& server = **started;
  std::promise<bool> served;
  std::future<bool> done = served.get_future();
  std::thread thread([&] { served.set_value(static_cast<bool>(server.Serve())); });

  const int idle = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(idle, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(server.port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(idle, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  const std::string partial = "GET / HTTP/1.1\r\n";  // and nothing more
  ASSERT_EQ(send(idle, partial.data(), partial.size(), 0), static_cast<ssize_t>(partial.size()));
  // The answer to another client comes while that connection idles.
  httplib::Client client("127.0.0.1", server.port());
  auto shell = client.Get("/");
  ASSERT_TRUE(shell);
  EXPECT_EQ(shell->status, 200);

  server.Stop();
  const bool returned = done.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "Serve() still waits for the idle connection";
  thread.join();
  EXPECT_TRUE(done.get());
  char byte;
  EXPECT_EQ(recv(idle, &byte, 1, 0), 0) << "the idle connection is closed";
  close(idle);
}

}  // namespace
}  // namespace tileprof::analyzer
