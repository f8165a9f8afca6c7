#include "common/mapped_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace tileprof {
namespace {

namespace fs = std::filesystem;

fs::path TempPath(const std::string& name) {
  return fs::temp_directory_path() / ("mapped_file_test_" + std::to_string(::getpid()) + name);
}

std::string AsString(const MappedFile& f) {
  return std::string(reinterpret_cast<const char*>(f.bytes().data()), f.bytes().size());
}

TEST(MappedFile, MapsARegularFile) {
  fs::path path = TempPath("regular");
  std::ofstream(path, std::ios::binary) << std::string("hello\0world", 11);
  auto file = MappedFile::Open(path.string());
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_TRUE(file->is_mapped());
  EXPECT_EQ(AsString(*file), std::string("hello\0world", 11));
  // Moving keeps the bytes valid and empties the source.
  MappedFile moved = std::move(*file);
  EXPECT_EQ(AsString(moved), std::string("hello\0world", 11));
  EXPECT_EQ(file->size(), 0u);
  fs::remove(path);
}

TEST(MappedFile, EmptyFileIsReadNotMapped) {
  fs::path path = TempPath("empty");
  std::ofstream(path, std::ios::binary).flush();
  auto file = MappedFile::Open(path.string());
  ASSERT_TRUE(file);
  EXPECT_FALSE(file->is_mapped());
  EXPECT_EQ(file->size(), 0u);
  fs::remove(path);
}

TEST(MappedFile, FifoFallsBackToRead) {
  fs::path path = TempPath("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  pid_t writer = ::fork();
  if (writer == 0) {
    std::ofstream(path, std::ios::binary) << "piped bytes";
    ::_exit(0);
  }
  auto file = MappedFile::Open(path.string());
  ASSERT_TRUE(file);
  EXPECT_FALSE(file->is_mapped());
  EXPECT_EQ(AsString(*file), "piped bytes");
  // Small read() buffers survive a move too (short-string storage).
  MappedFile moved = std::move(*file);
  EXPECT_EQ(AsString(moved), "piped bytes");
  fs::remove(path);
}

TEST(MappedFile, ErrorsAreTheStrerrorText) {
  auto missing = MappedFile::Open(TempPath("missing").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "No such file or directory");
  EXPECT_EQ(MappedFile::LastErrorNumber(), ENOENT);
  auto dir = MappedFile::Open(fs::temp_directory_path().string());
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message(), "Is a directory");
  EXPECT_EQ(MappedFile::LastErrorNumber(), EISDIR);
}

}  // namespace
}  // namespace tileprof
