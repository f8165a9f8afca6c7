// A line-oriented state machine over the sections of
// ../shared/spec/text-report.md. Section headers ("Target:", "Memory Usage:",
// "By Tile (Excluding Gaps):", ...) switch the state wherever they appear;
// inside a section a line is recognised by its label, so a published excerpt
// that drops rows, adds blank lines or moves the By Tile label to column 0
// still reads. Worked example, the published tile block (seed 004):
//
//   Tile # 0 memory usage:         -> the next Memory Usage block is tile 0's
//   Memory Usage:                  -> new block; no "  Total:" follows (stat)
//       Including Gaps:   834,416 B
//       ...
//             Control Code:     0 B  -> last data-type row printed
//                                    -> blank line: skipped
//           Vertex Data (22,353B):   -> header read verbatim
//
// and at the end of the block the 7 missing data-type rows and 3 missing
// vertex-data rows are counted as text_missing_rows; `known` says which rows
// the block has.
#include "reports/text_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/format.h"
#include "reports/invariants.h"
#include "reports/text_execution.h"
#include "reports/text_input.h"
#include "reports/text_scan.h"
#include "reports/text_writer.h"

namespace tileprof::report {
namespace {

// kLiveness: tileprof's own section, skipped (the structured formats carry
// its data).
enum class Section { kNone, kTarget, kGraph, kMemory, kByTile, kExecution, kLiveness };
enum class Group { kNone, kRegions, kDataTypes, kVertexCategories, kVertexTypes };

constexpr std::string_view kTargetLabels[] = {
    "Number of IPUs:",    "Tiles per IPU:",        "Total Tiles:",        "Memory Per-Tile:",
    "Total Memory:",      "Clock Speed (approx):", "Number of Replicas:", "IPUs per Replica:",
    "Tiles per Replica:", "Memory per Replica:"};
constexpr size_t kBaseTargetLines = 6;
constexpr std::string_view kGraphLabels[] = {
    "Number of vertices:", "Number of edges:", "Number of variables:", "Number of compute sets:"};
constexpr size_t kMaxShownLine = 200;  // longer lines are cut in error messages

struct Line {
  size_t number = 0;
  std::string_view raw;   // without the line break
  std::string_view text;  // trimmed
};

// If `text` starts with one of `labels`, its index and the trimmed value.
template <size_t N>
std::optional<std::pair<size_t, std::string_view>> MatchLabel(std::string_view text,
                                                              const std::string_view (&labels)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (text.starts_with(labels[i])) return std::pair{i, Trim(text.substr(labels[i].size()))};
  return std::nullopt;
}

class Reader {
 public:
  Reader(std::string_view input, std::string_view filename) : input_(input), filename_(filename) {}

  Expected<ParsedTextReport> Run();

 private:
  Status HandleLine(const Line& line);
  // Section headers; sets *handled when the line was one.
  Status HandleHeader(const Line& line, bool* handled);
  Status HandleTarget(const Line& line);
  Status HandleGraph(const Line& line);
  Status HandleMemory(const Line& line);
  Status HandleByTile(const Line& line);
  Status HandleExecution(const Line& line);
  void FinishSection();
  void FinishReport();

  void StartSection(Section section, const Line& line) {
    FinishSection();
    section_ = section;
    section_line_ = line;
    group_ = Group::kNone;
  }
  MemoryUsage& Block() {
    return block_is_tile_ ? out_.compilation.verbatim.tile_blocks.back().usage
                          : *out_.compilation.verbatim.total;
  }
  std::string Where(const Line& line) const { return fmt::format("{}:{}", filename_, line.number); }
  // Only the first place is kept, so later ones are not formatted.
  void Count(StatId id, const Line& line) {
    out_.stats.Add(id, out_.stats.count(id) == 0 ? Where(line) : std::string());
  }
  Error Fail(const Line& line, std::string_view token, std::string_view message) const;

  Expected<uint64_t> Count64(const Line& line, std::string_view token) const;
  Expected<uint32_t> Count32(const Line& line, std::string_view token) const;
  Expected<uint64_t> Bytes(const Line& line, std::string_view token) const;
  Expected<double> Decimal(const Line& line, std::string_view token) const;
  // Sets `row` of a known-mask, counting a duplicate.
  template <typename Bits>
  void MarkKnown(Bits& bits, size_t row, const Line& line) {
    if (bits.test(row)) Count(StatId::kTextDuplicateRow, line);
    bits.set(row);
  }

  std::string_view input_;
  std::string_view filename_;
  ParsedTextReport out_;
  bool stopped_ = false;  // a second report began
  bool recognised_ = false;

  Section section_ = Section::kNone;
  Line section_line_;
  Group group_ = Group::kNone;
  std::bitset<std::size(kTargetLabels)> target_seen_;
  std::bitset<std::size(kGraphLabels)> graph_seen_;
  bool block_is_tile_ = false;
  bool block_has_total_label_ = false;
  std::optional<Line> pending_tile_;  // "Tile # N memory usage:" awaiting its block
  uint32_t pending_tile_id_ = 0;
  std::vector<std::pair<Line, size_t>> histogram_stars_;  // per row: line, stars read
  std::optional<ExecutionSectionReader> execution_reader_;
  Line execution_total_line_;
};

Error Reader::Fail(const Line& line, std::string_view token, std::string_view message) const {
  size_t column = 0;
  if (token.data() >= line.raw.data() && token.data() <= line.raw.data() + line.raw.size())
    column = static_cast<size_t>(token.data() - line.raw.data());
  std::string_view raw = line.raw.substr(0, kMaxShownLine);
  column = std::min(column, raw.size());
  // The line goes to a terminal: control characters are shown escaped.
  std::string shown = EscapeControls(raw, &column);
  return MakeError("{}:{}: error: {}\n{}\n{}^", filename_, line.number, message, shown,
                   std::string(column, ' '));
}

Expected<uint64_t> Reader::Count64(const Line& line, std::string_view token) const {
  if (std::optional<uint64_t> value = ParseCount(token)) return *value;
  return Fail(line, token, fmt::format("expected a count like '1,216', got {}", Quoted(token)));
}

Expected<uint32_t> Reader::Count32(const Line& line, std::string_view token) const {
  TILEPROF_ASSIGN_OR_RETURN(uint64_t value, Count64(line, token));
  if (value > UINT32_MAX)
    return Fail(line, token, fmt::format("{} is out of range", Quoted(token)));
  return static_cast<uint32_t>(value);
}

Expected<uint64_t> Reader::Bytes(const Line& line, std::string_view token) const {
  std::string_view number = token;
  if (ConsumeSuffix(number, "B")) {
    if (std::optional<uint64_t> value = ParseCount(TrimRight(number))) return *value;
  }
  return Fail(line, token, fmt::format("expected a size like '1,234 B', got {}", Quoted(token)));
}

Expected<double> Reader::Decimal(const Line& line, std::string_view token) const {
  if (std::optional<double> value = ParseDecimal(token)) return *value;
  return Fail(line, token, fmt::format("expected a number like '3,801.8', got {}", Quoted(token)));
}

Expected<ParsedTextReport> Reader::Run() {
  TILEPROF_RETURN_IF_ERROR(CheckText(input_, filename_, "report"));
  size_t number = 0;
  size_t pos = 0;
  while (pos < input_.size() && !stopped_) {
    size_t end = input_.find('\n', pos);
    if (end == std::string_view::npos) end = input_.size();
    Line line;
    line.number = ++number;
    line.raw = input_.substr(pos, end - pos);
    pos = end + 1;
    if (line.raw.ends_with('\r')) {
      line.raw.remove_suffix(1);
      Count(StatId::kTextCrlf, line);
    }
    line.text = Trim(line.raw);
    TILEPROF_RETURN_IF_ERROR(HandleLine(line));
  }
  FinishSection();
  if (!recognised_) {
    Line first{1, input_.substr(0, input_.find('\n')), {}};
    return Fail(first, first.raw,
                "not a text report: no Target, Graph, Memory Usage, By Tile or Execution section");
  }
  FinishReport();
  return std::move(out_);
}

Status Reader::HandleLine(const Line& line) {
  if (line.text.empty()) return {};
  if (line.text.find_first_not_of('.') == std::string_view::npos) {
    Count(StatId::kTextElisionMarker, line);
    return {};
  }
  bool handled = false;
  TILEPROF_RETURN_IF_ERROR(HandleHeader(line, &handled));
  if (handled) return {};
  switch (section_) {
    case Section::kTarget:
      return HandleTarget(line);
    case Section::kGraph:
      return HandleGraph(line);
    case Section::kMemory:
      return HandleMemory(line);
    case Section::kByTile:
      return HandleByTile(line);
    case Section::kExecution:
      return HandleExecution(line);
    case Section::kLiveness:
      return {};
    case Section::kNone:
      break;
  }
  Count(StatId::kTextUnknownLine, line);
  return {};
}

Status Reader::HandleHeader(const Line& line, bool* handled) {
  std::string_view text = line.text;
  CompilationReport& report = out_.compilation;
  *handled = true;
  auto second_report = [&]() {
    Count(StatId::kTextExtraReport, line);
    stopped_ = true;
  };
  if (std::string_view version = text; ConsumePrefix(version, Trim(kFormatLinePrefix))) {
    version = Trim(version);
    // "<major>.<minor>"; a missing dot makes the minor part empty and invalid.
    size_t dot = std::min(version.find('.'), version.size());
    std::optional<uint64_t> major = ParseCount(version.substr(0, dot));
    std::optional<uint64_t> minor = ParseCount(version.substr(std::min(dot + 1, version.size())));
    uint64_t major_value = major.value_or(uint64_t{UINT32_MAX} + 1);
    uint64_t minor_value = minor.value_or(uint64_t{UINT32_MAX} + 1);
    if (major_value > UINT32_MAX || minor_value > UINT32_MAX)
      return Fail(line, version, fmt::format("malformed format version {}", Quoted(version)));
    if (major_value != kFormatVersion.major)
      return Fail(line, version,
                  fmt::format("unsupported text report format {}.{} (this reader reads {}.x)",
                              major_value, minor_value, kFormatVersion.major));
    out_.format_version =
        FormatVersion{static_cast<uint32_t>(major_value), static_cast<uint32_t>(minor_value)};
    recognised_ = true;  // a tileprof report, even if it has no sections
    return {};
  }
  if (text == "Target:") {
    if (report.target) return second_report(), Status();
    StartSection(Section::kTarget, line);
    report.target.emplace();
    target_seen_.reset();
  } else if (text == "Graph:") {
    if (report.graph) return second_report(), Status();
    StartSection(Section::kGraph, line);
    report.graph.emplace();
    graph_seen_.reset();
  } else if (text.starts_with("Tile #") && text.ends_with("memory usage:")) {
    std::string_view id =
        text.substr(6, text.size() - 6 - std::string_view("memory usage:").size());
    TILEPROF_ASSIGN_OR_RETURN(uint32_t tile, Count32(line, Trim(id)));
    StartSection(Section::kNone, line);
    if (pending_tile_) Count(StatId::kTextOrphanTileHeader, *pending_tile_);
    pending_tile_ = line;
    pending_tile_id_ = tile;
  } else if (text == "Memory Usage:") {
    if (!pending_tile_ && report.verbatim.total) return second_report(), Status();
    StartSection(Section::kMemory, line);
    block_is_tile_ = pending_tile_.has_value();
    if (block_is_tile_) {
      report.verbatim.tile_blocks.push_back({pending_tile_id_, {}});
      pending_tile_.reset();
    } else {
      report.verbatim.total.emplace();
    }
    Block().known = MemoryRowsKnown::None();
    block_has_total_label_ = false;
  } else if (text == "By Tile (Excluding Gaps):") {
    if (report.verbatim.by_tile) return second_report(), Status();
    StartSection(Section::kByTile, line);
    report.verbatim.by_tile.emplace();
    histogram_stars_.clear();
  } else if (text == "Liveness:") {
    StartSection(Section::kLiveness, line);
  } else if (text == "Execution:") {
    if (out_.execution) return second_report(), Status();
    StartSection(Section::kExecution, line);
    out_.execution.emplace();
    execution_reader_.emplace(*out_.execution);
  } else {
    *handled = false;
    return {};
  }
  recognised_ = true;
  return {};
}

Status Reader::HandleTarget(const Line& line) {
  auto match = MatchLabel(line.text, kTargetLabels);
  if (!match) return Count(StatId::kTextUnknownLine, line), Status();
  // Not a structured binding: lambdas below capture these (clang < 16).
  size_t index = match->first;
  std::string_view value = match->second;
  if (target_seen_.test(index)) Count(StatId::kTextDuplicateRow, line);
  target_seen_.set(index);
  Target& target = *out_.compilation.target;
  auto size = [&](uint64_t& field) -> Status {
    std::optional<uint64_t> bytes = ParseBinarySize(value);
    if (!bytes)
      return Fail(line, value,
                  fmt::format("expected a size like '256.0 kB', got {}", Quoted(value)));
    field = *bytes;
    if (!value.ends_with(" B")) target.sizes_rounded = true;
    return {};
  };
  auto replication = [&]() -> Replication& {
    if (!target.replication) target.replication.emplace();
    return *target.replication;
  };
  switch (index) {
    case 0: {
      TILEPROF_ASSIGN_OR_RETURN(target.num_ipus, Count32(line, value));
      return {};
    }
    case 1: {
      TILEPROF_ASSIGN_OR_RETURN(target.tiles_per_ipu, Count64(line, value));
      return {};
    }
    case 2: {
      TILEPROF_ASSIGN_OR_RETURN(target.total_tiles, Count64(line, value));
      return {};
    }
    case 3:
      return size(target.bytes_per_tile);
    case 4:
      return size(target.total_memory);
    case 5: {
      std::string_view number = value;
      if (!ConsumeSuffix(number, " MHz"))
        return Fail(line, value,
                    fmt::format("expected a clock like '1,600.0 MHz', got {}", Quoted(value)));
      TILEPROF_ASSIGN_OR_RETURN(double mhz, Decimal(line, TrimRight(number)));
      target.clock_hz = mhz * 1e6;
      return {};
    }
    case 6: {
      TILEPROF_ASSIGN_OR_RETURN(replication().num_replicas, Count32(line, value));
      return {};
    }
    case 7: {
      TILEPROF_ASSIGN_OR_RETURN(replication().ipus_per_replica, Count32(line, value));
      return {};
    }
    case 8: {
      TILEPROF_ASSIGN_OR_RETURN(replication().tiles_per_replica, Count64(line, value));
      return {};
    }
    default:
      return size(replication().memory_per_replica);
  }
}

Status Reader::HandleGraph(const Line& line) {
  auto match = MatchLabel(line.text, kGraphLabels);
  if (!match) return Count(StatId::kTextUnknownLine, line), Status();
  // Not a structured binding: lambdas below capture these (clang < 16).
  size_t index = match->first;
  std::string_view value = match->second;
  if (graph_seen_.test(index)) Count(StatId::kTextDuplicateRow, line);
  graph_seen_.set(index);
  GraphInfo& graph = *out_.compilation.graph;
  uint64_t* fields[] = {&graph.num_vertices, &graph.num_edges, &graph.num_variables,
                        &graph.num_compute_sets};
  TILEPROF_ASSIGN_OR_RETURN(*fields[index], Count64(line, value));
  return {};
}

Status Reader::HandleMemory(const Line& line) {
  std::string_view text = line.text;
  MemoryUsage& usage = Block();
  MemoryRowsKnown& known = usage.known;
  if (text == "Total:") {
    block_has_total_label_ = true;
    return {};
  }
  if (std::string_view value = text; ConsumePrefix(value, "Including Gaps:")) {
    if (known.including_gaps) Count(StatId::kTextDuplicateRow, line);
    known.including_gaps = true;
    TILEPROF_ASSIGN_OR_RETURN(usage.including_gaps, Bytes(line, Trim(value)));
    return {};
  }
  static constexpr std::pair<std::string_view, Group> kGroupHeaders[] = {
      {"Excluding Gaps:", Group::kNone},
      {"By Memory Region:", Group::kRegions},
      {"By Data Type:", Group::kDataTypes},
      {"By Category:", Group::kVertexCategories},
      {"By Type:", Group::kVertexTypes}};
  for (const auto& [header, group] : kGroupHeaders) {
    if (text != header) continue;
    group_ = group;
    if (group == Group::kVertexTypes) {
      if (known.by_vertex_type) Count(StatId::kTextDuplicateRow, line);
      known.by_vertex_type = true;
    }
    return {};
  }
  if (std::string_view value = text;
      ConsumePrefix(value, "Vertex Data (") && ConsumeSuffix(value, "):")) {
    if (known.vertex_data) Count(StatId::kTextDuplicateRow, line);
    known.vertex_data = true;
    TILEPROF_ASSIGN_OR_RETURN(usage.vertex_data, Bytes(line, Trim(value)));
    group_ = Group::kNone;
    return {};
  }
  // Labelled rows: labels are distinct across the groups, so a row is
  // accepted wherever it appears in the block.
  auto labelled = [&](auto label_of, size_t count, auto& bits, auto& values) -> Expected<bool> {
    for (size_t i = 0; i < count; ++i) {
      std::string_view value = text;
      if (!ConsumePrefix(value, label_of(i)) || !ConsumePrefix(value, ":")) continue;
      MarkKnown(bits, i, line);
      TILEPROF_ASSIGN_OR_RETURN(values[i], Bytes(line, Trim(value)));
      return true;
    }
    return false;
  };
  auto region_label = [](size_t i) { return RegionLabel(static_cast<Region>(i)); };
  auto category_label = [](size_t i) { return CategoryLabel(static_cast<Category>(i)); };
  auto vertex_label = [](size_t i) {
    return VertexDataCategoryLabel(static_cast<VertexDataCategory>(i));
  };
  TILEPROF_ASSIGN_OR_RETURN(bool is_region,
                            labelled(region_label, kNumRegions, known.regions, usage.by_region));
  if (is_region) return {};
  TILEPROF_ASSIGN_OR_RETURN(bool is_category, labelled(category_label, kNumCategories,
                                                       known.categories, usage.by_category));
  if (is_category) return {};
  TILEPROF_ASSIGN_OR_RETURN(bool is_vertex_category,
                            labelled(vertex_label, kNumVertexDataCategories,
                                     known.vertex_data_categories, usage.vertex_data_by_category));
  if (is_vertex_category) return {};
  if (group_ == Group::kVertexTypes) {
    // "<C++ type name, may contain spaces>   <bytes> B"
    std::string_view rest = text;
    if (!ConsumeSuffix(rest, " B")) return Count(StatId::kTextUnknownLine, line), Status();
    rest = TrimRight(rest);
    size_t space = rest.find_last_of(" \t");
    std::string_view number = space == std::string_view::npos ? rest : rest.substr(space + 1);
    std::string_view name = space == std::string_view::npos ? "" : TrimRight(rest.substr(0, space));
    TILEPROF_ASSIGN_OR_RETURN(uint64_t bytes, Count64(line, number));
    if (name.empty()) return Fail(line, text, "vertex type row without a type name");
    usage.by_vertex_type.push_back({std::string(name), bytes});
    return {};
  }
  Count(StatId::kTextUnknownLine, line);
  return {};
}

Status Reader::HandleByTile(const Line& line) {
  std::string_view text = line.text;
  ByTileSummary& by_tile = *out_.compilation.verbatim.by_tile;
  if (text.starts_with("Range (KB)")) return {};
  for (bool including : {true, false}) {
    std::string_view value = text;
    if (!ConsumePrefix(value,
                       including ? "Maximum (Including Gaps):" : "Maximum (Excluding Gaps):"))
      continue;
    // "49,184 (48.0 K) on tile 0"
    value = Trim(value);
    size_t open = value.find(" (");
    size_t close = value.find(") on tile ");
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
      return Fail(line, value,
                  fmt::format("expected '<bytes> (<KiB> K) on tile <id>', got {}", Quoted(value)));
    TILEPROF_ASSIGN_OR_RETURN(uint64_t bytes, Count64(line, value.substr(0, open)));
    TILEPROF_ASSIGN_OR_RETURN(uint32_t tile, Count32(line, Trim(value.substr(close + 10))));
    if (value.substr(open + 2, close - open - 2) != KibiK(bytes))
      Count(StatId::kTextInconsistentTotals, line);
    auto& field = including ? by_tile.max_including_gaps : by_tile.max_excluding_gaps;
    if (field) Count(StatId::kTextDuplicateRow, line);
    field = TileMaximum{bytes, tile};
    return {};
  }
  if (std::string_view value = text; ConsumeSuffix(value, "tile(s) out of memory")) {
    if (by_tile.tiles_out_of_memory) Count(StatId::kTextDuplicateRow, line);
    TILEPROF_ASSIGN_OR_RETURN(by_tile.tiles_out_of_memory, Count64(line, TrimRight(value)));
    return {};
  }
  if (text.front() < '0' || text.front() > '9')
    return Count(StatId::kTextUnknownLine, line), Status();
  // "<lo> - <hi> [*...] <count>"
  std::vector<std::string_view> tokens;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find_first_of(" \t", pos);
    if (end == std::string_view::npos) end = text.size();
    tokens.push_back(text.substr(pos, end - pos));
    pos = text.find_first_not_of(" \t", end);
    if (pos == std::string_view::npos) break;
  }
  bool has_bar = tokens.size() == 5 && tokens[3].find_first_not_of('*') == std::string_view::npos;
  if ((tokens.size() != 4 && !has_bar) || tokens[1] != "-")
    return Fail(line, text, "expected a histogram row '<lo> - <hi> <stars> <count>'");
  TILEPROF_ASSIGN_OR_RETURN(uint64_t lo, Count64(line, tokens[0]));
  TILEPROF_ASSIGN_OR_RETURN(uint64_t hi, Count64(line, tokens[2]));
  TILEPROF_ASSIGN_OR_RETURN(uint64_t tiles, Count64(line, tokens.back()));
  if (hi <= lo) return Fail(line, tokens[2], fmt::format("empty range {} - {}", lo, hi));
  if (!by_tile.rows.empty() && lo < by_tile.rows.back().hi_kib)
    return Fail(line, tokens[0],
                fmt::format("histogram row {} - {} does not follow {} - {}", lo, hi,
                            by_tile.rows.back().lo_kib, by_tile.rows.back().hi_kib));
  by_tile.rows.push_back({lo, hi, tiles});
  histogram_stars_.push_back({line, has_bar ? tokens[3].size() : 0});
  return {};
}

Status Reader::HandleExecution(const Line& line) {
  ExecutionLineOutcome outcome = execution_reader_->Read(line.text);
  switch (outcome.kind) {
    case ExecutionLineOutcome::kRead:
      break;
    case ExecutionLineOutcome::kUnknown:
      Count(StatId::kTextUnknownLine, line);
      break;
    case ExecutionLineOutcome::kDuplicate:
      Count(StatId::kTextDuplicateRow, line);
      break;
    case ExecutionLineOutcome::kInconsistent:
      Count(StatId::kTextInconsistentTotals, line);
      break;
    case ExecutionLineOutcome::kError:
      return Fail(line, outcome.token, outcome.message);
  }
  if (line.text.starts_with("Total cycles:")) execution_total_line_ = line;
  return {};
}

void Reader::FinishSection() {
  CompilationReport& report = out_.compilation;
  switch (section_) {
    case Section::kTarget: {
      size_t expected = report.target->replication ? std::size(kTargetLabels) : kBaseTargetLines;
      if (target_seen_.count() < expected) Count(StatId::kTextMissingRows, section_line_);
      Violations violations;
      CheckTarget(*report.target, violations);
      if (!violations.empty()) Count(StatId::kTextInconsistentTotals, section_line_);
      break;
    }
    case Section::kGraph:
      if (!graph_seen_.all()) Count(StatId::kTextMissingRows, section_line_);
      break;
    case Section::kMemory: {
      const MemoryUsage& usage = Block();
      if (!block_has_total_label_) Count(StatId::kTextMissingTotalLabel, section_line_);
      if (!usage.known.IsComplete()) Count(StatId::kTextMissingRows, section_line_);
      Violations violations;
      CheckMemoryUsage(usage, "block", violations);
      if (!violations.empty()) Count(StatId::kTextInconsistentTotals, section_line_);
      for (size_t i = 1; i < usage.by_vertex_type.size(); ++i) {
        if (usage.by_vertex_type[i].bytes > usage.by_vertex_type[i - 1].bytes) {
          Count(StatId::kTextVertexTypeOrder, section_line_);
          break;
        }
      }
      break;
    }
    case Section::kByTile: {
      const ByTileSummary& by_tile = *report.verbatim.by_tile;
      if (!RowsAreContiguous(by_tile.rows)) Count(StatId::kTextHistogramRowsElided, section_line_);
      uint64_t largest = 0;
      for (const HistogramRow& row : by_tile.rows) largest = std::max(largest, row.tiles);
      for (size_t i = 0; i < by_tile.rows.size(); ++i) {
        const auto& [row_line, stars] = histogram_stars_[i];
        if (stars != static_cast<size_t>(BarLength(by_tile.rows[i].tiles, largest)))
          Count(StatId::kTextHistogramBarMismatch, row_line);
      }
      break;
    }
    case Section::kExecution:
    case Section::kLiveness:
    case Section::kNone:
      break;
  }
  section_ = Section::kNone;
}

void Reader::FinishReport() {
  CompilationReport& report = out_.compilation;
  if (pending_tile_) Count(StatId::kTextOrphanTileHeader, *pending_tile_);
  if (report.target && report.verbatim.by_tile && !report.verbatim.by_tile->rows.empty()) {
    uint64_t counted = 0;
    for (const HistogramRow& row : report.verbatim.by_tile->rows) counted += row.tiles;
    if (counted != report.target->total_tiles)
      Count(StatId::kTextHistogramCountMismatch, section_line_);
  }
  // The clock behind "approx N microseconds": the target's when it prints the
  // same figure, else the one the figure implies (cycles / microseconds).
  std::optional<double> microseconds;
  if (execution_reader_) microseconds = execution_reader_->microseconds();
  if (out_.execution && microseconds) {
    ExecutionReport& execution = *out_.execution;
    auto prints = [&](double clock_hz) {
      double us = static_cast<double>(execution.total_cycles) / clock_hz * 1e6;
      return WithThousands(us, 1) == WithThousands(*microseconds, 1);
    };
    if (report.target && report.target->clock_hz > 0 && prints(report.target->clock_hz)) {
      execution.clock_hz = report.target->clock_hz;
    } else if (*microseconds > 0 && execution.total_cycles > 0) {
      execution.clock_hz = static_cast<double>(execution.total_cycles) / *microseconds * 1e6;
      if (!prints(execution.clock_hz))
        Count(StatId::kTextInconsistentTotals, execution_total_line_);
    } else {
      Count(StatId::kTextInconsistentTotals, execution_total_line_);
    }
  }
}

}  // namespace

Expected<ParsedTextReport> ReadTextReport(std::string_view text, std::string_view filename) {
  return Reader(text, filename).Run();
}

}  // namespace tileprof::report
