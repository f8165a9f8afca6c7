// A temporary FILE* for code that writes to one (log lines, the progress
// bar), read back as text.
#pragma once

#include <cstdio>
#include <string>

namespace tileprof::testing {

class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() {
    if (file_ != nullptr) std::fclose(file_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  std::FILE* file() { return file_; }
  std::string Text() {
    std::string text;
    if (file_ == nullptr) return text;
    std::fflush(file_);
    std::rewind(file_);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) text.append(buffer, n);
    return text;
  }

 private:
  std::FILE* file_;
};

}  // namespace tileprof::testing
