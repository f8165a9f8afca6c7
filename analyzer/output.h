// Command output as data: named tables of typed cells, rendered as an aligned
// table for people, CSV or JSON for programs, so the three `--format`s of
// every analyzer command come from the same rows (DESIGN.md "Conventions").
// A command may also lay its table format out by hand (the text report's
// histogram and tile blocks); CSV and JSON then still come from the tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tileprof::analyzer {

// Empty (unknown, printed "-" / "" / null), text, a count of bytes or tiles,
// a signed delta, or a ratio.
using Cell = std::variant<std::monostate, std::string, uint64_t, int64_t, double>;

struct Table {
  std::string name;   // JSON member, CSV section, table heading ("tiles_over")
  std::string title;  // heading in the table format; `name` when empty
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;

  void Add(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

struct Output {
  // The table format laid out by hand; when empty, the tables are printed
  // aligned instead.
  std::vector<std::string> text;
  std::vector<Table> tables;
  // Lines printed after the tables in the table format only (notes, hints).
  std::vector<std::string> notes;
};

enum class OutputFormat { kTable, kCsv, kJson };
inline constexpr std::string_view kOutputFormatHelp = "Output format: table, csv or json";
std::optional<OutputFormat> ParseOutputFormat(std::string_view name);

// Table: `text` (or the aligned tables, numbers with thousands separators),
// then the notes. CSV (RFC 4180): one table is a header and rows; several are
// each preceded by a "# name" line and separated by a blank line. JSON: an
// object with one array of row objects per table, keyed by column name.
std::string Render(const Output& output, OutputFormat format);

// The aligned rendering of one table (heading line, header, rows).
std::vector<std::string> RenderTable(const Table& table);

std::string CellText(const Cell& cell);  // "1,234", "-12", "3,801.80", "-"

// b - a as a signed cell, saturating at the int64 limits (only absurd
// reports get there).
Cell CountDelta(uint64_t a, uint64_t b);

}  // namespace tileprof::analyzer
