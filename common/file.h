// Whole-file reading and atomic writing. Nothing the user wrote is ever left
// half-written: writers go to a temporary file in the same directory and
// rename it over the target, so a crash leaves the old file or the new one.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"

namespace tileprof {

// Reads a regular file. Errors: "'<path>': No such file", "... is a directory",
// or the strerror text.
Expected<std::string> ReadFile(const std::string& path);

// Writes `contents` to `path` atomically (temp file + fsync + rename).
Status WriteFileAtomic(const std::string& path, std::string_view contents);

}  // namespace tileprof
