// The tileprof binary must not load libstdc++.so, libgcc_s or libfmt.so:
// their loading alone costs more than GNU size's whole run on a small
// archive, which bench/size/compare.sh holds us to (see the top-level
// CMakeLists). Sanitizer, fuzzing and shared-layer builds keep the shared
// runtimes on purpose (TILEPROF_STATIC_CXX_RUNTIME is then unset).
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli_run.h"

namespace {

TEST(Startup, LoadsNoCxxRuntimeLibraries) {
  std::string command = "readelf -d " + std::string(TILEPROF_CLI) + " 2>&1 | grep NEEDED";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string needed;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) needed += buffer;
  pclose(pipe);
  ASSERT_THAT(needed, ::testing::HasSubstr("libc.so")) << "readelf found no NEEDED entries";
#ifndef TILEPROF_STATIC_CXX_RUNTIME
  GTEST_SKIP() << "a sanitizer, fuzzing or shared-layer build: shared C++ runtime expected";
#endif
  EXPECT_THAT(needed, ::testing::Not(::testing::HasSubstr("libstdc++")));
  EXPECT_THAT(needed, ::testing::Not(::testing::HasSubstr("libgcc_s")));
  EXPECT_THAT(needed, ::testing::Not(::testing::HasSubstr("libfmt")));
}

TEST(Startup, VersionAndHelpWork) {
  auto version = tileprof::cli_test::Tileprof("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_THAT(version.out, ::testing::StartsWith("tileprof "));
}

}  // namespace
