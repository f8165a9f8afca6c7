#include "analyzer/xml_writer.h"

namespace tileprof::analyzer {
namespace {

// Length of the valid UTF-8 sequence at `s[i]`, or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
  for (size_t k = 1; k < n; ++k) cp = cp << 6 | (byte(i + k) & 0x3fu);
  // Overlong forms, surrogates and values past U+10FFFF are not characters.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
    return 0;
  return n;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      default:
        break;
    }
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    size_t n = Utf8Length(text, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

void XmlWriter::Start(std::string_view name,
                      std::initializer_list<std::pair<std::string_view, std::string>> attributes) {
  out_ += '<';
  out_ += name;
  for (const auto& [key, value] : attributes) {
    out_ += ' ';
    out_ += key;
    out_ += "=\"";
    out_ += XmlEscape(value);
    out_ += '"';
  }
}

void XmlWriter::Open(std::string_view name,
                     std::initializer_list<std::pair<std::string_view, std::string>> attributes) {
  Start(name, attributes);
  out_ += '>';
  open_.emplace_back(name);
}

void XmlWriter::Empty(std::string_view name,
                      std::initializer_list<std::pair<std::string_view, std::string>> attributes) {
  Start(name, attributes);
  out_ += "/>";
}

void XmlWriter::Text(std::string_view text) { out_ += XmlEscape(text); }

void XmlWriter::Close() {
  if (open_.empty()) return;
  out_ += "</" + open_.back() + ">";
  open_.pop_back();
}

std::string XmlWriter::Finish() {
  while (!open_.empty()) Close();
  return std::move(out_);
}

}  // namespace tileprof::analyzer
