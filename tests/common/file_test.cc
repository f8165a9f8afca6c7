#include "common/file.h"

#include <filesystem>

#include <gtest/gtest.h>

namespace tileprof {
namespace {

std::filesystem::path TempDir() {
  auto dir =
      std::filesystem::temp_directory_path() / ("tileprof_file_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(File, AtomicWriteReplacesAndLeavesNoTemporaries) {
  auto dir = TempDir();
  std::string path = (dir / "out.txt").string();
  ASSERT_TRUE(WriteFileAtomic(path, "first"));
  ASSERT_TRUE(WriteFileAtomic(path, "second"));
  EXPECT_EQ(*ReadFile(path), "second");
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  std::filesystem::remove_all(dir);
}

TEST(File, ErrorsNameThePath) {
  auto missing = ReadFile("/nonexistent/tileprof/x");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("'/nonexistent/tileprof/x'"), std::string::npos);
  auto dir = ReadFile("/");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message(), "'/' is a directory");
  EXPECT_FALSE(WriteFileAtomic("/nonexistent/tileprof/x", "y"));
}

}  // namespace
}  // namespace tileprof
