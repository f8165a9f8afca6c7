#include "analyzer/tile_archives.h"

#include <fmt/format.h>

#include <map>

#include "elfdump/ar_reader.h"
#include "elfdump/elf_reader.h"
#include "elfdump/file_provider.h"
#include "reports/histogram.h"

namespace tileprof::analyzer {

Expected<std::vector<elf::TileImage>> TileImagesOf(const report::CompilationReport& report,
                                                   std::string_view report_name) {
  if (report.tiles.empty()) {
    return MakeError("{}: the report has no per-tile data (a text report prints only summaries), so no "
                     "per-tile archive can be written from it",
                     report_name);
  }
  std::vector<elf::TileImage> images(report.tiles.size());
  for (size_t i = 0; i < report.tiles.size(); ++i) {
    const report::TileMemory& tile = report.tiles[i];
    if (tile.tile != i) {
      return MakeError("{}: tile entry {} has id {}; an archive needs every tile in order", report_name, i,
                       tile.tile);
    }
    for (size_t c = 0; c < report::kNumCategories; ++c) {
      if (tile.by_category[c] == 0) continue;
      images[i].sections.push_back(
          {fmt::format("{}{}", kCategorySectionPrefix, report::CategoryMachineName(static_cast<report::Category>(c))),
           tile.by_category[c], elf::SectionKind::kUnlisted});
    }
  }
  return images;
}

Status WriteReportArchive(const std::string& path, const report::CompilationReport& report,
                          std::string_view report_name) {
  TILEPROF_ASSIGN_OR_RETURN(std::vector<elf::TileImage> images, TileImagesOf(report, report_name));
  elf::TileArchiveOptions options;
  options.layout = elf::TileLayout::kTotalInTextWithBreakdown;
  Status written = elf::WriteTileArchive(path, images, options);
  if (!written) return written.error().Within(path);
  return {};
}

Expected<Output> ArchiveView(const std::string& path) {
  elf::DiskFileProvider files;
  auto contents = files.Open(path);
  if (!contents) return contents.error().Within(path);
  std::span<const uint8_t> bytes = (*contents)->bytes();
  auto layout = elf::RecognizeArchive(bytes, bytes.size());
  if (!layout) return MakeError("{}: not an ar archive (a per-tile archive is what target.saveArchive writes)", path);

  struct Member {
    std::string name;
    uint64_t total = 0;
    std::map<std::string, uint64_t> kinds;
  };
  std::vector<Member> members;
  std::optional<Error> problem;
  elf::ElfReader reader;
  std::string diagnostic;
  Status walked = elf::ForEachMember(bytes, bytes.size(), *layout, path, files, [&](const elf::ArchiveMember& m) {
    if (problem) return;
    diagnostic = fmt::format("{}({})", path, m.name);
    const elf::ElfObject& object = reader.Read({m.bytes, m.nominal_size, diagnostic, m.element_size});
    if (!object.recognized) {
      problem = MakeError("{}: not an ELF object", diagnostic);
      return;
    }
    Member member{std::string(m.name), 0, {}};
    bool has_text = false;
    for (const elf::ElfSection& s : object.sections) {
      if (s.name == ".text") {
        if (has_text) {
          problem = MakeError("{}: two .text sections", diagnostic);
          return;
        }
        has_text = true;
        member.total = s.size;
      } else if (s.name.starts_with(kCategorySectionPrefix)) {
        member.kinds[std::string(s.name.substr(kCategorySectionPrefix.size()))] += s.size;
      }
    }
    if (!has_text) {
      problem = MakeError("{}: no .text section (a per-tile archive keeps each tile's total there)", diagnostic);
      return;
    }
    members.push_back(std::move(member));
  });
  if (problem) return *problem;
  if (!walked) return walked.error().Within(path);
  if (members.empty()) return MakeError("{}: the archive has no members", path);

  // Columns: the categories in report order, then any other kind found.
  std::vector<std::string> kinds;
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    std::string name(report::CategoryMachineName(static_cast<report::Category>(c)));
    for (const Member& m : members)
      if (m.kinds.contains(name)) {
        kinds.push_back(name);
        break;
      }
  }
  for (const Member& m : members)
    for (const auto& [kind, bytes] : m.kinds)
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);

  Table tiles{"tiles", "Tiles (member order)", {"tile", "member", "total"}, {}};
  for (const std::string& kind : kinds) tiles.columns.push_back(kind);
  std::vector<uint64_t> totals;
  report::ByTileSummary summary;
  for (size_t i = 0; i < members.size(); ++i) {
    const Member& m = members[i];
    std::vector<Cell> row{uint64_t{i}, m.name, m.total};
    for (const std::string& kind : kinds) {
      auto it = m.kinds.find(kind);
      row.push_back(it == m.kinds.end() ? uint64_t{0} : it->second);
    }
    tiles.Add(std::move(row));
    totals.push_back(m.total);
    if (!summary.max_excluding_gaps || m.total > summary.max_excluding_gaps->bytes)
      summary.max_excluding_gaps = report::TileMaximum{m.total, static_cast<uint32_t>(i)};
  }
  summary.rows = report::BuildHistogram(totals);
  Output out;
  out.text.push_back("  By Tile (Excluding Gaps):");
  for (std::string& line : report::RenderByTile(summary)) out.text.push_back(std::move(line));
  out.text.emplace_back();
  for (std::string& line : RenderTable(tiles)) out.text.push_back(std::move(line));
  Table histogram{"histogram", "Histogram", {"lo_kb", "hi_kb", "tiles"}, {}};
  for (const auto& row : summary.rows) histogram.Add({row.lo_kib, row.hi_kib, row.tiles});
  out.tables.push_back(std::move(tiles));
  out.tables.push_back(std::move(histogram));
  return out;
}

}  // namespace tileprof::analyzer
