// A temporary path per running test, for fixtures that write files: named
// after the process and the test so that parallel ctest runs never share
// one, and removed first so that a crashed earlier run leaves nothing
// behind. The fixture creates and removes it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace tileprof::testing {

// "<tmp>/<prefix><pid>_<test name>", not existing.
inline std::string FreshTempPath(const std::string& prefix) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            (prefix + std::to_string(getpid()) + "_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                               .string();
  std::filesystem::remove_all(path);
  return path;
}

}  // namespace tileprof::testing
