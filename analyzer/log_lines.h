// The line level of `tileprof logscan`: finding the lines worth a closer look
// in a log of any size, and taking a line's prefix apart.
//
// Logs of the Graphcore ecosystem mix many writers in one stream; every
// prefix below was seen in a published log (tests/analyzer/data/published/,
// ../shared/corpus/published/) or is the format string of the logger that
// writes it:
//
//   2022-09-06 23:59:34.180032: I tensorflow/.../poplar_platform.cc:43] msg   TensorFlow
//   I0330 12:34:56.789012  4242 poplar_compiler.cc:1201] msg                  glog / absl
//   ...: I tensorflow/compiler/plugin/poplar/driver/executor.cc:660] msg      (doc-elided)
//   09:38:52.878 15288 PO:ENGINE   [I]     msg                                Poplar SDK 1-2
//   2022-05-18T12:39:14.459868Z popart:devicex 90915.91186 D: msg             SDK 2.3+ (spdlog)
//   [2020-07-29 08:59:03.333] [popart:session] [info] msg                     older spdlog
//   [18:06:02.520] [poptorch:cpp] [warning] msg                               PopTorch
//   [1,0]<stderr>:msg                                                         mpirun --tag-output
//
// A physical line may hold several frames of a progress bar redrawn with
// '\r', and ANSI colour and cursor codes anywhere; both are handled here so
// the recogniser sees one clean message per frame.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tileprof::analyzer {

// A frame of a line, its prefix taken apart.
struct LogLine {
  uint64_t number = 0;              // 1-based physical line
  std::string_view message;         // after the prefix, ANSI codes removed
  std::optional<double> timestamp;  // seconds; comparable within one log
  std::string_view logger;          // "PO:ENGINE", "popart:session", "poptorch:cpp", or ""
  std::string_view source;          // "tensorflow/.../poplar_compiler.cc" or "poplar_compiler.cc"
  char level = 0;                   // 'I', 'W', 'E', 'D', 'T', 'F', 'C', or 0 when unknown
  size_t indent = 0;                // spaces before the message (Poplar nests phases so)
};

// The physical line of `text` that starts at `start`: where it ends (the
// index of its '\n', or text.size()) and whether it contains one of the
// phrases the recogniser looks for. One pass over its bytes, one table lookup
// each (see Phrases in log_lines.cc); lines without a phrase cannot produce
// an event, so the scanner skips them unparsed.
struct LineSpan {
  size_t end = 0;
  bool may_hold_event = false;
};
LineSpan NextLine(std::string_view text, size_t start);

// NextLine's verdict on one line (which may lack its '\n'); for tests.
bool MayHoldEvent(std::string_view line);

// Calls `frame(text)` for each '\r'-separated frame of a physical line with
// the ANSI escape sequences removed (`scratch` holds the cleaned text).
template <typename Fn>
void ForEachFrame(std::string_view line, std::string& scratch, Fn&& frame);

// Removes ANSI escape sequences (CSI "ESC [ ... final", two-byte "ESC x")
// and backspaces; returns `text` itself when it has none.
std::string_view StripAnsi(std::string_view text, std::string& scratch);

// Takes the prefix of one clean frame apart. Never fails: a frame without a
// known prefix is all message.
LogLine ParseLogLine(std::string_view frame, uint64_t number);

// "HH:MM:SS[.fff...]" at `pos`, in seconds since midnight.
std::optional<double> ClockAt(std::string_view text, size_t pos);

template <typename Fn>
void ForEachFrame(std::string_view line, std::string& scratch, Fn&& frame) {
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find('\r', start);
    if (end == std::string_view::npos) end = line.size();
    std::string_view piece = line.substr(start, end - start);
    if (!piece.empty()) frame(StripAnsi(piece, scratch));
    if (end == line.size()) break;
    start = end + 1;
  }
}

}  // namespace tileprof::analyzer
