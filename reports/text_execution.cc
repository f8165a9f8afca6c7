#include "reports/text_execution.h"

#include <fmt/format.h>

#include "common/format.h"
#include "reports/text_scan.h"

namespace tileprof::report {
namespace {

using Outcome = ExecutionLineOutcome;

Outcome Bad(std::string_view token, std::string message) {
  return {Outcome::kError, token, std::move(message)};
}

Outcome BadCount(std::string_view token) {
  return Bad(token, fmt::format("expected a count like '1,216', got {}", Quoted(token)));
}

Outcome BadNumber(std::string_view token) {
  return Bad(token, fmt::format("expected a number like '3,801.8', got {}", Quoted(token)));
}

// The value of an SDK 1.x total: "963,855", "5,513,152 Estimated (must
// enable debug.instrumentCompute)" or "Must enable debug.instrumentExternalExchange".
std::optional<Outcome> ReadTotal(std::string_view value, CycleTotal& total) {
  if (std::string_view option = value; ConsumePrefix(option, "Must enable ")) {
    total.needs_option = std::string(Trim(option));
    return std::nullopt;
  }
  size_t space = value.find(' ');
  std::string_view number = value.substr(0, space);
  std::optional<uint64_t> cycles = ParseCount(number);
  if (!cycles) return BadCount(number);
  total.cycles = cycles;
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view note = Trim(value.substr(space));
  if (!ConsumePrefix(note, "Estimated (must enable ") || !ConsumeSuffix(note, ")"))
    return Bad(value.substr(space + 1),
               fmt::format("expected 'Estimated (must enable <option>)', got {}",
                           Quoted(value.substr(space + 1))));
  total.estimated = true;
  total.needs_option = std::string(note);
  return std::nullopt;
}

}  // namespace

Outcome ExecutionSectionReader::Read(std::string_view text) {
  if (text == "Programs executed:") {
    group_ = Group::kPrograms;
    return {};
  }
  if (text == "Cycles by vertex type:") {
    group_ = Group::kVertexTypes;
    return {};
  }
  if (text == "Execution steps:") {
    group_ = Group::kSteps;
    return {};
  }
  if (std::string_view value = text; ConsumePrefix(value, "Total cycles:")) {
    group_ = Group::kNone;
    return TotalCycles(Trim(value));
  }
  if (std::optional<Outcome> row = TileAverage(text)) return *row;
  if (std::optional<Outcome> row = TileTotal(text)) return *row;
  return GroupRow(text);
}

// "6,681,766 (approx 5,023.9 microseconds)"
Outcome ExecutionSectionReader::TotalCycles(std::string_view value) {
  size_t open = value.find(" (approx ");
  std::optional<uint64_t> cycles = ParseCount(value.substr(0, open));
  if (!cycles) return BadCount(value.substr(0, open));
  out_.total_cycles = *cycles;
  microseconds_.reset();
  if (open == std::string_view::npos) return {};
  std::string_view us = value.substr(open + 9);
  if (!ConsumeSuffix(us, " microseconds)"))
    return Bad(us, fmt::format("expected '(approx <n> microseconds)', got {}", Quoted(us)));
  microseconds_ = ParseDecimal(us);
  if (!microseconds_) return BadNumber(us);
  return {};
}

// "Tile average IPU exchange cycles: 8,697.4 (0.1% of total)" (SDK 2.0+);
// the percentage is derived, so only checked.
std::optional<Outcome> ExecutionSectionReader::TileAverage(std::string_view text) {
  for (size_t k = 0; k < kNumCycleKinds; ++k) {
    std::string_view value = text;
    if (!ConsumePrefix(value, TileAverageLabel(static_cast<CycleKind>(k))) ||
        !ConsumePrefix(value, ":"))
      continue;
    group_ = Group::kNone;
    value = Trim(value);
    size_t open = value.find(" (");
    std::optional<double> average = ParseDecimal(value.substr(0, open));
    if (!average) return BadNumber(value.substr(0, open));
    Outcome outcome;
    if (out_.tile_average_cycles[k]) outcome.kind = Outcome::kDuplicate;
    out_.tile_average_cycles[k] = average;
    if (open == std::string_view::npos) return outcome;
    std::string_view percent = value.substr(open + 2);
    if (!ConsumeSuffix(percent, "% of total)"))
      return Bad(percent, fmt::format("expected '(<n>% of total)', got {}", Quoted(percent)));
    std::optional<double> shown = ParseDecimal(percent);
    if (!shown) return BadNumber(percent);
    double expected =
        out_.total_cycles == 0 ? 0.0 : *average / static_cast<double>(out_.total_cycles) * 100.0;
    if (outcome.kind == Outcome::kRead && WithThousands(*shown, 1) != WithThousands(expected, 1))
      outcome.kind = Outcome::kInconsistent;
    return outcome;
  }
  return std::nullopt;
}

// "Total IPU exchange cycles: 963,855" and the other SDK 1.x sums.
std::optional<Outcome> ExecutionSectionReader::TileTotal(std::string_view text) {
  for (size_t k = 0; k <= kNumCycleKinds; ++k) {
    bool shared = k == kNumCycleKinds;
    std::string_view value = text;
    if (!ConsumePrefix(value, shared ? kSharedStructureCopyLabel
                                     : TileTotalLabel(static_cast<CycleKind>(k))) ||
        !ConsumePrefix(value, ":"))
      continue;
    group_ = Group::kNone;
    CycleTotal& slot = shared ? out_.shared_structure_copy_cycles : out_.tile_total_cycles[k];
    Outcome outcome;
    if (slot.printed) outcome.kind = Outcome::kDuplicate;
    CycleTotal total;
    total.printed = true;
    if (std::optional<Outcome> error = ReadTotal(Trim(value), total)) return error;
    slot = std::move(total);
    return outcome;
  }
  return std::nullopt;
}

Outcome ExecutionSectionReader::GroupRow(std::string_view text) {
  switch (group_) {
    case Group::kPrograms: {
      // "<anonymous>." or "a, b, c."
      std::string_view list = text;
      if (!ConsumeSuffix(list, ".")) break;
      while (!list.empty()) {
        size_t comma = list.find(", ");
        out_.programs.emplace_back(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 2);
      }
      return {};
    }
    case Group::kVertexTypes: {
      // "popops::Zero2d<float>   (14592 instances):   17,612,544"
      size_t tail = text.rfind("instances):");
      size_t open = tail == std::string_view::npos ? tail : text.rfind('(', tail);
      if (open == std::string_view::npos) break;
      std::string_view name = TrimRight(text.substr(0, open));
      if (name.empty()) return Bad(text, "vertex type row without a type name");
      std::string_view instances_text = Trim(text.substr(open + 1, tail - open - 1));
      std::optional<uint64_t> instances = ParseCount(instances_text);
      if (!instances) return BadCount(instances_text);
      std::string_view cycles_text = Trim(text.substr(tail + 11));
      std::optional<uint64_t> cycles = ParseCount(cycles_text);
      if (!cycles) return BadCount(cycles_text);
      out_.cycles_by_vertex_type.push_back({std::string(name), *instances, *cycles});
      return {};
    }
    case Group::kSteps: {
      size_t space = text.find_last_of(" \t");
      if (space == std::string_view::npos) break;
      std::optional<uint64_t> cycles = ParseCount(text.substr(space + 1));
      if (!cycles) return BadCount(text.substr(space + 1));
      out_.steps.push_back({std::string(TrimRight(text.substr(0, space))), *cycles});
      return {};
    }
    case Group::kNone:
      break;
  }
  return {Outcome::kUnknown, {}, {}};
}

}  // namespace tileprof::report
