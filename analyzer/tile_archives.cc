#include "analyzer/tile_archives.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "elfdump/ar_reader.h"
#include "elfdump/elf_reader.h"
#include "elfdump/file_provider.h"
#include "reports/histogram.h"

namespace tileprof::analyzer {

Expected<std::vector<elf::TileImage>> TileImagesOf(const report::CompilationReport& report,
                                                   std::string_view report_name) {
  if (report.tiles.empty()) {
    return MakeError(
        "{}: the report has no per-tile data (a text report prints only summaries), so no "
        "per-tile archive can be written from it",
        report_name);
  }
  std::vector<elf::TileImage> images(report.tiles.size());
  for (size_t i = 0; i < report.tiles.size(); ++i) {
    const report::TileMemory& tile = report.tiles[i];
    if (tile.tile != i) {
      return MakeError("{}: tile entry {} has id {}; an archive needs every tile in order",
                       report_name, i, tile.tile);
    }
    for (size_t c = 0; c < report::kNumCategories; ++c) {
      if (tile.by_category[c] == 0) continue;
      images[i].sections.push_back(
          {fmt::format("{}{}", kCategorySectionPrefix,
                       report::CategoryMachineName(static_cast<report::Category>(c))),
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

namespace {

// Each member's total (its .text size) and per-kind bytes (its category
// sections), with the kinds interned.
struct ArchiveMember {
  std::string name;
  uint64_t total = 0;
  std::vector<std::pair<uint32_t, uint64_t>> kinds;  // (kind index, bytes)
};
struct ArchiveMembers {
  std::vector<std::string> kinds;
  std::unordered_map<std::string, uint32_t> kind_index;
  std::vector<ArchiveMember> members;
};

Expected<ArchiveMembers> ReadArchiveMembers(const std::string& path) {
  elf::DiskFileProvider files;
  auto contents = files.Open(path);
  if (!contents) return contents.error().Within(path);
  std::span<const uint8_t> bytes = (*contents)->bytes();
  auto layout = elf::RecognizeArchive(bytes, bytes.size());
  if (!layout)
    return MakeError("{}: not an ar archive (a per-tile archive is what target.saveArchive writes)",
                     path);

  // Kinds are interned once: 94,208 members times a dozen sections must not
  // cost a dozen string-keyed maps each.
  ArchiveMembers out;
  std::vector<std::string>& kinds = out.kinds;
  std::unordered_map<std::string, uint32_t>& kind_index = out.kind_index;
  std::vector<ArchiveMember>& members = out.members;
  std::optional<Error> problem;
  elf::ElfReader reader;
  std::string diagnostic;
  Status walked = elf::ForEachMember(
      bytes, bytes.size(), *layout, path, files, [&](const elf::ArchiveMember& m) {
        if (problem) return;
        diagnostic.assign(path).append("(").append(m.name).append(")");
        const elf::ElfObject& object =
            reader.Read({m.bytes, m.nominal_size, diagnostic, m.element_size});
        if (!object.recognized) {
          problem = MakeError("{}: not an ELF object", diagnostic);
          return;
        }
        ArchiveMember member{std::string(m.name), 0, {}};
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
            std::string kind(s.name.substr(kCategorySectionPrefix.size()));
            auto [it, added] = kind_index.try_emplace(kind, static_cast<uint32_t>(kinds.size()));
            if (added) kinds.push_back(kind);
            member.kinds.emplace_back(it->second, s.size);
          }
        }
        if (!has_text) {
          problem =
              MakeError("{}: no .text section (a per-tile archive keeps each tile's total there)",
                        diagnostic);
          return;
        }
        members.push_back(std::move(member));
      });
  if (problem) return *problem;
  if (!walked) return walked.error().Within(path);
  if (members.empty()) return MakeError("{}: the archive has no members", path);
  return out;
}

}  // namespace

Expected<Output> ArchiveView(const std::string& path) {
  TILEPROF_ASSIGN_OR_RETURN(ArchiveMembers archive, ReadArchiveMembers(path));
  const std::vector<std::string>& kinds = archive.kinds;
  const std::unordered_map<std::string, uint32_t>& kind_index = archive.kind_index;
  std::vector<ArchiveMember>& members = archive.members;
  // Columns: the categories in report order, then any other kind found.
  std::vector<uint32_t> order;  // column -> kind index
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    auto it =
        kind_index.find(std::string(report::CategoryMachineName(static_cast<report::Category>(c))));
    if (it != kind_index.end()) order.push_back(it->second);
  }
  for (uint32_t k = 0; k < kinds.size(); ++k)
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  std::vector<size_t> column_of(kinds.size());
  for (size_t col = 0; col < order.size(); ++col) column_of[order[col]] = col;

  Table tiles{"tiles", "Tiles (member order)", {"tile", "member", "total"}, {}};
  for (uint32_t k : order) tiles.columns.push_back(kinds[k]);
  tiles.rows.reserve(members.size());
  std::vector<uint64_t> totals;
  totals.reserve(members.size());
  report::ByTileSummary summary;
  for (size_t i = 0; i < members.size(); ++i) {
    ArchiveMember& m = members[i];
    std::vector<Cell> row(3 + order.size(), Cell{uint64_t{0}});
    row[0] = uint64_t{i};
    row[1] = std::move(m.name);
    row[2] = m.total;
    for (const auto& [kind, bytes] : m.kinds) std::get<uint64_t>(row[3 + column_of[kind]]) += bytes;
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
