#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tileprof {
namespace {

Error SystemError(std::string_view what, const std::string& path) {
  return MakeError("{} '{}': {}", what, path, std::strerror(errno));
}

}  // namespace

Expected<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SystemError("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Error e = SystemError("cannot stat", path);
    ::close(fd);
    return e;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return MakeError("'{}' is a directory", path);
  }
  // Reads straight into the string: a 2 MB dump is not copied twice. The
  // size from stat is only a first guess (pipes have none, files can grow).
  std::string data;
  size_t used = 0;
  data.resize(S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) + 1 : size_t{1} << 16);
  for (;;) {
    if (used == data.size()) data.resize(data.size() * 2);
    ssize_t n = ::read(fd, data.data() + used, data.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = SystemError("cannot read", path);
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  data.resize(used);
  return data;
}

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  std::string temp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return SystemError("cannot create a temporary file for", path);
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = SystemError("cannot write", temp);
      ::close(fd);
      ::unlink(temp.c_str());
      return e;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // mkstemp creates 0600; give the file the permissions an ordinary write would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Error e = SystemError("cannot write", temp);
    ::unlink(temp.c_str());
    return e;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    Error e = SystemError("cannot rename the temporary file onto", path);
    ::unlink(temp.c_str());
    return e;
  }
  return {};
}

}  // namespace tileprof
