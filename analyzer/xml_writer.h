// A small streaming XML writer for the SVG and HTML the analyzer emits.
//
// Why not tinyxml2, which DESIGN.md names for SVG: Debian ships it only as a
// shared library (libtinyxml2.so.9, no libtinyxml2.a), and linking it into
// `tileprof` would add libtinyxml2.so.9 and, through it, libstdc++.so.6 to
// the binary's NEEDED list, which the static-libstdc++ start-up rule
// (tests/cli/startup_test.cc) forbids. Writing needs only elements,
// attributes, text and escaping, which is this file; the tests parse every
// SVG we write with tinyxml2 (linked into the test binary only) as the
// independent well-formedness oracle.
//
// Escaping: & < > " in attributes, & < > in text; bytes that XML 1.0 does
// not allow (C0 controls other than tab, LF, CR) and invalid UTF-8 become
// U+FFFD, so names read from an odd report cannot break the document.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tileprof::analyzer {

class XmlWriter {
 public:
  // Opens `<name a="v" ...>`; attributes are (name, value) pairs.
  void Open(std::string_view name,
            std::initializer_list<std::pair<std::string_view, std::string>> attributes = {});
  // `<name .../>`
  void Empty(std::string_view name,
             std::initializer_list<std::pair<std::string_view, std::string>> attributes = {});
  void Text(std::string_view text);
  // Raw markup the caller has already made well-formed (an SVG inside HTML).
  void Raw(std::string_view markup) { out_ += markup; }
  void Close();  // the innermost open element
  // Closes everything still open and returns the document.
  std::string Finish();

 private:
  void Start(std::string_view name,
             std::initializer_list<std::pair<std::string_view, std::string>> attributes);
  std::string out_;
  std::vector<std::string> open_;
};

// `text` with XML's special characters escaped (attribute-safe).
std::string XmlEscape(std::string_view text);

}  // namespace tileprof::analyzer
