// Is a file given as text really text? Logs and text reports must be UTF-8
// without NUL bytes; a binary file (a PNG, a CBOR report renamed .rep, a
// core dump given as a log) gets one line that names the first offending
// byte's offset and shows the bytes there escaped, so no raw byte of it
// reaches the terminal:
//
//   x.log: not a text log: byte 0x89 is not UTF-8 at byte offset 0 ("\x89PNG\r\n\x1a\n...")
//
// The check runs over every byte before a reader starts, eight bytes at a
// time while they are ASCII, so it costs little next to the reading itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace tileprof::report {

struct NonText {
  uint64_t offset = 0;  // of the first byte that is not text
  std::string reason;   // "a NUL byte", "byte 0x89 is not UTF-8"
};

// The first place where `bytes` stops being UTF-8 text without NUL bytes,
// or nullopt when all of it is. Overlong forms, surrogates and code points
// past U+10FFFF are not UTF-8; a sequence cut by the end of the input is not
// either.
std::optional<NonText> FindNonText(std::string_view bytes);

// At most `max_bytes` of `bytes` for a message: printable ASCII as it is,
// `\\`, `\"`, `\t`, `\r`, `\n` and every other byte as `\xNN`, then "..."
// when cut.
std::string EscapeBytes(std::string_view bytes, size_t max_bytes = 16);

// `text` with control characters (C0, DEL) escaped as EscapeBytes does, the
// rest (UTF-8 included) kept: a line of a text file shown in a message.
// `*column`, when given, is a byte column of `text` moved to the same place
// in the result.
std::string EscapeControls(std::string_view text, size_t* column = nullptr);

// Fails with "<file>: not a text <what>: <reason> at byte offset <n> (<bytes>)"
// when FindNonText finds something.
Status CheckText(std::string_view bytes, std::string_view file, std::string_view what);

}  // namespace tileprof::report
