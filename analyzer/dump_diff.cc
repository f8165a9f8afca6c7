#include "analyzer/dump_diff.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "common/file.h"
#include "common/mapped_file.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/skim.h"

namespace tileprof::analyzer {
namespace {

int Count(const DumpDiffResult& r, bool (*pred)(const PairResult&)) {
  int n = 0;
  for (const PairResult& p : r.pairs) n += pred(p) ? 1 : 0;
  return n;
}

// A dump's text and what keeps it alive.
struct DumpText {
  std::shared_ptr<const void> owner;
  std::string_view text;
};

// Mapped where possible: no copy, and the page-cache pages map in 16 per
// fault where a fresh 2 MB buffer faults in page by page. The parser may read
// the byte after the text, so a file that ends on a page boundary is read
// instead (as is anything that cannot be mapped: ReadFile words the errors).
Expected<DumpText> ReadDump(const std::string& path) {
  Expected<MappedFile> mapped = MappedFile::Open(path, /*whole=*/true);
  static const long page = ::sysconf(_SC_PAGESIZE);
  if (mapped && mapped->is_mapped() && page > 0 &&
      mapped->size() % static_cast<uint64_t>(page) != 0) {
    auto file = std::make_shared<const MappedFile>(std::move(*mapped));
    return DumpText{file,
                    {reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size()}};
  }
  TILEPROF_ASSIGN_OR_RETURN(std::string read, ReadFile(path));
  auto owned = std::make_shared<const std::string>(std::move(read));
  return DumpText{owned, *owned};
}

using SkipRanges = std::vector<std::pair<uint32_t, uint32_t>>;

Expected<hlo::Module> Load(const std::string& path, const DumpText& text, SkipRanges skips) {
  hlo::ParseOptions options;
  options.source_name = path;
  options.skip_bodies = std::move(skips);
  return hlo::ParseModule(text.owner, text.text, options);
}

// Two runs' dumps of one program are mostly the same bytes: computations
// whose text is identical on both sides need not be parsed. Nothing to skip
// when the texts do not skim or their computations differ in name or order.
std::pair<SkipRanges, SkipRanges> SameBodies(std::string_view a, std::string_view b) {
  std::optional<std::vector<hlo::ComputationSpan>> spans_a;
  std::thread worker([&] { spans_a = hlo::SkimComputations(a); });
  auto spans_b = hlo::SkimComputations(b);
  worker.join();
  if (!spans_a || !spans_b || spans_a->size() != spans_b->size()) return {};
  std::pair<SkipRanges, SkipRanges> skips;
  for (size_t i = 0; i < spans_a->size(); ++i) {
    const hlo::ComputationSpan& x = (*spans_a)[i];
    const hlo::ComputationSpan& y = (*spans_b)[i];
    if (x.name != y.name) return {};
    if (x.Text(a) != y.Text(b)) continue;
    skips.first.emplace_back(x.body, x.end);
    skips.second.emplace_back(y.body, y.end);
  }
  return skips;
}

// Parses both sides (on two threads: parsing dominates) and diffs them.
void ParseAndDiff(const std::optional<DumpFile>& a, const std::optional<DumpFile>& b,
                  const DumpText& text_a, const DumpText& text_b,
                  std::pair<SkipRanges, SkipRanges> skips, PairResult& r) {
  std::optional<Expected<hlo::Module>> loaded_a;
  std::thread worker([&] { loaded_a.emplace(Load(a->path, text_a, std::move(skips.first))); });
  Expected<hlo::Module> mb = Load(b->path, text_b, std::move(skips.second));
  worker.join();
  Expected<hlo::Module>& ma = *loaded_a;
  if (!ma || !mb) {
    r.error = !ma ? ma.error().message() : mb.error().message();
    return;
  }
  r.error.clear();
  r.module_a = std::string(ma->name());
  r.module_b = std::string(mb->name());
  r.diff = DiffModules(*ma, *mb);
}

PairResult Compare(const std::string& key, const std::optional<DumpFile>& a,
                   const std::optional<DumpFile>& b) {
  PairResult r;
  r.key = key;
  if (a) r.path_a = a->path, r.module_a = a->name.module;
  if (b) r.path_b = b->path, r.module_b = b->name.module;
  if (!a || !b) return r;
  Expected<DumpText> text_a = ReadDump(a->path);
  Expected<DumpText> text_b = ReadDump(b->path);
  if (!text_a || !text_b) {
    r.error = !text_a ? text_a.error().message() : text_b.error().message();
    return r;
  }
  if (text_a->text == text_b->text) {  // the same bytes: equal, and no need to parse
    r.diff.emplace();
    r.diff->equal_level = 0;
    return r;
  }
  auto skips = SameBodies(text_a->text, text_b->text);
  if (!skips.first.empty()) {
    int skipped = static_cast<int>(skips.first.size());
    ParseAndDiff(a, b, *text_a, *text_b, std::move(skips), r);
    // A skimmed text that does not parse (or whose skipped bodies do not pair
    // up) is parsed in full, which also words any error precisely.
    if (r.error.empty() && !r.diff->needs_full_parse) {
      r.unparsed_same_computations = skipped;
      return r;
    }
    r.diff.reset();
  }
  ParseAndDiff(a, b, *text_a, *text_b, {}, r);
  return r;
}

DumpFile AsDumpFile(const std::string& path) {
  std::string file = std::filesystem::path(path).filename().string();
  std::optional<DumpName> name = ParseDumpName(file);
  DumpFile f{path, name ? *name : DumpName{file, -1, file, file, ""}, 0};
  std::error_code ec;
  f.bytes = std::filesystem::file_size(path, ec);
  return f;
}

}  // namespace

int DumpDiffResult::changed() const {
  return Count(*this, [](const PairResult& p) { return p.diff && !p.diff->equal(); });
}
int DumpDiffResult::identical() const {
  return Count(*this, [](const PairResult& p) { return p.diff && p.diff->equal(); });
}
int DumpDiffResult::only_a() const {
  return Count(*this, [](const PairResult& p) { return p.path_b.empty(); });
}
int DumpDiffResult::only_b() const {
  return Count(*this, [](const PairResult& p) { return p.path_a.empty(); });
}
int DumpDiffResult::errors() const {
  return Count(*this, [](const PairResult& p) { return !p.error.empty(); });
}

Expected<DumpDiffResult> DiffDumps(const std::string& a, const std::string& b,
                                   const DumpDiffOptions& options) {
  namespace fs = std::filesystem;
  DumpDiffResult result;
  result.input_a = a;
  result.input_b = b;
  std::error_code ec;
  bool dir_a = fs::is_directory(a, ec), dir_b = fs::is_directory(b, ec);
  for (const std::string& p : {a, b})
    if (!fs::exists(p, ec)) return MakeError("'{}': No such file or directory", p);
  if (dir_a != dir_b)
    return MakeError("'{}' is a {} but '{}' is a {}: give two files or two dump directories", a,
                     dir_a ? "directory" : "file", b, dir_b ? "directory" : "file");
  if (!dir_a) {
    // Two files: compare them whatever their names say.
    DumpFile fa = AsDumpFile(a), fb = AsDumpFile(b);
    result.pairs.push_back(Compare(fa.name.function + " " + fa.name.stage, fa, fb));
    return result;
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<DumpFile> files_a, ListDump(a, &result.skipped_a));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<DumpFile> files_b, ListDump(b, &result.skipped_b));
  if (options.largest_only) {
    const DumpFile* la = LargestModule(files_a);
    const DumpFile* lb = LargestModule(files_b);
    if (!la || !lb) return MakeError("no HLO text dump in '{}'", !la ? a : b);
    result.pairs.push_back(Compare(la->name.function + " " + la->name.stage, *la, *lb));
    return result;
  }
  for (DumpPair& pair : PairDumps(std::move(files_a), std::move(files_b)).pairs)
    result.pairs.push_back(Compare(pair.key, pair.a, pair.b));
  if (result.pairs.empty()) return MakeError("no HLO text dumps in '{}' or '{}'", a, b);
  return result;
}

}  // namespace tileprof::analyzer
