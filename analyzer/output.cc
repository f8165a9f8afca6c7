#include "analyzer/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/format.h"

namespace tileprof::analyzer {
namespace {

bool IsNumber(const Cell& cell) {
  return std::holds_alternative<uint64_t>(cell) || std::holds_alternative<int64_t>(cell) ||
         std::holds_alternative<double>(cell);
}

// CSV and JSON carry plain numbers: no separators, full precision.
std::string PlainText(const Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* u = std::get_if<uint64_t>(&cell)) return std::to_string(*u);
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return fmt::format("{}", *d);
  return "";
}

std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// A JSON string literal; names read from text may not be valid UTF-8, so
// invalid bytes become U+FFFD.
std::string JsonString(const std::string& text) {
  // Printable ASCII but for '"' and '\\' (names and column titles, nearly
  // always) stands as it is; nlohmann escapes the rest.
  bool plain = std::all_of(text.begin(), text.end(),
                           [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  if (plain) return '"' + text + '"';
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonCell(const Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return JsonString(*s);
  if (const auto* u = std::get_if<uint64_t>(&cell)) return std::to_string(*u);
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    // Shortest form that reads back exactly; JSON has no NaN or infinity.
    return std::isfinite(*d) ? fmt::format("{}", *d) : "null";
  }
  return "null";
}

}  // namespace

std::optional<OutputFormat> ParseOutputFormat(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  return std::nullopt;
}

std::string CellText(const Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* u = std::get_if<uint64_t>(&cell)) return WithThousands(*u);
  if (const auto* i = std::get_if<int64_t>(&cell)) {
    return *i > 0 ? "+" + WithThousands(*i) : WithThousands(*i);
  }
  if (const auto* d = std::get_if<double>(&cell)) return WithThousands(*d, 2);
  return "-";
}

Cell CountDelta(uint64_t a, uint64_t b) {
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  if (b >= a) return b - a > kMax ? INT64_MAX : static_cast<int64_t>(b - a);
  return a - b > kMax ? INT64_MIN : -static_cast<int64_t>(a - b);
}

std::vector<std::string> RenderTable(const Table& table) {
  std::vector<std::string> lines;
  lines.push_back((table.title.empty() ? table.name : table.title) + ":");
  std::vector<size_t> widths(table.columns.size());
  std::vector<bool> numeric(table.columns.size(), false);
  for (size_t c = 0; c < table.columns.size(); ++c) widths[c] = table.columns[c].size();
  std::vector<std::vector<std::string>> cells;
  cells.reserve(table.rows.size());
  for (const auto& row : table.rows) {
    std::vector<std::string> texts;
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      texts.push_back(CellText(row[c]));
      // One row per line: a control character in a name must not break it.
      for (char& ch : texts.back())
        if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
      widths[c] = std::max(widths[c], texts.back().size());
      if (IsNumber(row[c])) numeric[c] = true;
    }
    cells.push_back(std::move(texts));
  }
  auto line = [&](const std::vector<std::string>& texts) {
    std::string out = " ";
    for (size_t c = 0; c < texts.size(); ++c) {
      out += ' ';
      const std::string& text = texts[c];
      if (std::all_of(text.begin(), text.end(), [](char ch) { return ch > 0; })) {
        // ASCII: as wide as it is long; padded without fmt's width scan.
        size_t pad = widths[c] - std::min(widths[c], text.size());
        if (numeric[c]) out.append(pad, ' ');
        out += text;
        if (!numeric[c]) out.append(pad, ' ');
      } else {
        // fmt pads by display width (a wide character counts two).
        out += numeric[c] ? fmt::format("{:>{}}", text, widths[c])
                          : fmt::format("{:<{}}", text, widths[c]);
      }
      out += ' ';
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  lines.push_back(line(table.columns));
  for (const auto& texts : cells) lines.push_back(line(texts));
  if (table.rows.empty()) lines.push_back("  (none)");
  return lines;
}

std::string Render(const Output& output, OutputFormat format) {
  std::string out;
  switch (format) {
    case OutputFormat::kTable: {
      std::vector<std::string> lines = output.text;
      if (lines.empty()) {
        for (const Table& table : output.tables) {
          if (!lines.empty()) lines.emplace_back();
          for (std::string& l : RenderTable(table)) lines.push_back(std::move(l));
        }
      }
      if (!output.notes.empty()) {
        lines.emplace_back();
        lines.insert(lines.end(), output.notes.begin(), output.notes.end());
      }
      for (const std::string& l : lines) out.append(l).push_back('\n');
      return out;
    }
    case OutputFormat::kCsv: {
      bool several = output.tables.size() > 1;
      for (size_t t = 0; t < output.tables.size(); ++t) {
        const Table& table = output.tables[t];
        if (t > 0) out += '\n';
        if (several) out += "# " + table.name + '\n';
        for (size_t c = 0; c < table.columns.size(); ++c)
          out += (c ? "," : "") + CsvField(table.columns[c]);
        out += '\n';
        for (const auto& row : table.rows) {
          for (size_t c = 0; c < row.size(); ++c)
            out += (c ? "," : "") + CsvField(PlainText(row[c]));
          out += '\n';
        }
      }
      return out;
    }
    case OutputFormat::kJson: {
      // Streamed rather than built as a DOM: a 94,208-row table would
      // otherwise cost a million small JSON values.
      out += "{";
      for (size_t t = 0; t < output.tables.size(); ++t) {
        const Table& table = output.tables[t];
        out += t ? ",\n  " : "\n  ";
        out += JsonString(table.name);
        out += ": [";
        std::vector<std::string> keys;  // "\"name\": " per column, once per table
        for (const std::string& column : table.columns) keys.push_back(JsonString(column) + ": ");
        for (size_t r = 0; r < table.rows.size(); ++r) {
          out += r ? ",\n    {" : "\n    {";
          const auto& row = table.rows[r];
          for (size_t c = 0; c < row.size() && c < table.columns.size(); ++c) {
            if (c) out += ", ";
            out += keys[c];
            out += JsonCell(row[c]);
          }
          out += "}";
        }
        out += table.rows.empty() ? "]" : "\n  ]";
      }
      out += output.tables.empty() ? "}\n" : "\n}\n";
      return out;
    }
  }
  return out;
}

}  // namespace tileprof::analyzer
