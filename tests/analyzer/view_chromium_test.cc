// `tileprof view` pages open in headless Chromium (Debian `chromium`,
// installed by scripts/setup) without console errors, and the page's inline
// script runs to its end (it sets <body data-ready="1">). The clicks of
// each view are tested by tests/browser (playwright-core driving the same
// Chromium); this test needs nothing from npm.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzer/view_page.h"
#include "analyzer_fixtures.h"

namespace tileprof::analyzer {
namespace {

using namespace testing;  // NOLINT: the fixtures

struct Rendered {
  std::string dom;
  std::vector<std::string> console;  // Chromium's "CONSOLE" log lines
  int status = -1;
};

Rendered RenderInChromium(const std::string& html_path) {
  fs::path dir = TempDir() / "chromium";
  fs::create_directories(dir);
  std::string err = (dir / "stderr.txt").string();
  // A private profile directory: the test must not depend on (or touch) a
  // user's profile, and parallel runs must not share one.
  ShellRun run = Shell(
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run "
      "--user-data-dir='" +
      (dir / "profile").string() +
      "' --enable-logging=stderr --v=0 "
      "--dump-dom 'file://" +
      html_path + "' 2>'" + err + "'");
  Rendered rendered{run.out, {}, run.status};
  std::string log = ReadOrEmpty(err);
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find(":CONSOLE") != std::string::npos) rendered.console.push_back(line);
  return rendered;
}

bool HaveChromium() { return Shell("command -v chromium >/dev/null 2>&1").status == 0; }

TEST(HtmlChromium, ThePageRendersWithoutConsoleErrors) {
  ASSERT_TRUE(HaveChromium()) << "chromium is not installed (scripts/setup installs it)";
  const CompiledSample& s = OomSample();
  for (const std::string& format : {std::string("json"), std::string("text")}) {
    SCOPED_TRACE(format);
    auto loaded = OpenReport(s.paths.at(format));
    ASSERT_TRUE(loaded) << loaded.error().message();
    Expected<std::string> page = ViewPage(*loaded, format == "json" ? &*loaded : nullptr);
    ASSERT_TRUE(page) << page.error().message();
    std::string path = (TempDir() / ("page_" + format + ".html")).string();
    ASSERT_TRUE(WriteFileAtomic(path, *page));
    Rendered r = RenderInChromium(path);
    EXPECT_EQ(r.status, 0);
    EXPECT_THAT(r.console, ::testing::IsEmpty());
    EXPECT_THAT(r.dom, ::testing::HasSubstr("data-ready=\"1\""));
    EXPECT_THAT(r.dom, ::testing::HasSubstr("id=\"summary\""));
    EXPECT_THAT(r.dom, ::testing::HasSubstr("data-view=\"liveness\""));
    // Self-contained: nothing is fetched.
    EXPECT_THAT(*page, ::testing::Not(::testing::HasSubstr("src=")));
    EXPECT_THAT(*page, ::testing::Not(::testing::HasSubstr("href=")));
  }
}

// The check above can fail: a page with a script error is caught.
TEST(HtmlChromium, TheCheckCatchesAScriptError) {
  ASSERT_TRUE(HaveChromium()) << "chromium is not installed (scripts/setup installs it)";
  std::string path = (TempDir() / "broken.html").string();
  ASSERT_TRUE(
      WriteFileAtomic(path,
                      "<!DOCTYPE html><html><body><script>undefinedFunction();"
                      "document.body.setAttribute('data-ready','1');</script></body></html>"));
  Rendered r = RenderInChromium(path);
  EXPECT_THAT(r.console, ::testing::Not(::testing::IsEmpty()));
  EXPECT_THAT(r.dom, ::testing::Not(::testing::HasSubstr("data-ready=\"1\"")));
}

}  // namespace
}  // namespace tileprof::analyzer
