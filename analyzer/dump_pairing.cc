#include "analyzer/dump_pairing.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <system_error>

namespace tileprof::analyzer {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string FunctionKey(std::string_view module_name) {
  std::string name(module_name);
  // The ".N" uniquifier of XLA's NameUniquer or JAX's jit naming.
  size_t dot = name.rfind('.');
  if (dot != std::string::npos && AllDigits(std::string_view(name).substr(dot + 1)))
    name.resize(dot);
  // TensorFlow function names carry a per-trace uid: a_inference_<fn>_<uid>__.
  static const std::regex kTfUid(R"(^(a_inference_.*?)_\d+__$)");
  std::smatch m;
  if (std::regex_match(name, m, kTfUid)) name = m[1].str();
  return name;
}

std::optional<DumpName> ParseDumpName(std::string_view file_name) {
  std::string rest(file_name);
  DumpName out;
  out.file = rest;
  if (!EndsWith(rest, ".txt") && !EndsWith(rest, ".hlo")) return std::nullopt;
  rest.resize(rest.size() - 4);
  // Not HLO text, though they end in .txt.
  for (std::string_view tail : {"-buffer-assignment", "-memory-usage-report", "-live-range",
                                "-buffer-assignment-values", ".thunk_sequence", ".mlir-passes"}) {
    if (EndsWith(rest, tail)) return std::nullopt;
  }
  // Optional "<timestamp>." from --xla_dump_include_timestamp.
  static const std::regex kTimestamp(R"(^\d{10,}\.)");
  rest = std::regex_replace(rest, kTimestamp, "", std::regex_constants::format_first_only);
  static const std::regex kModuleId(R"(^module_(\d+)\.?)");
  std::smatch m;
  if (std::regex_search(rest, m, kModuleId)) {
    out.module_id = std::stoll(m[1].str().substr(0, 15));
    rest = m.suffix().str();
  }
  // The stage suffix, tried from the most specific form.
  static const std::regex kPerPass(
      R"(^(.*?)\.(\d{4})\.([^.]+)\.(after_[^.]+\.before_[^.]+)$)");
  static const std::regex kAfter(
      R"(^(.*?)\.((?:[A-Za-z0-9_]+(?:\.\d+[A-Za-z0-9_]*)?_)?after_optimizations)$)");
  static const std::regex kBefore(R"(^(.*?)\.(before_optimizations)$)");
  if (std::regex_match(rest, m, kPerPass)) {
    out.module = m[1].str();
    out.stage = m[2].str() + "." + m[3].str() + "." + m[4].str();
  } else if (std::regex_match(rest, m, kAfter) || std::regex_match(rest, m, kBefore)) {
    out.module = m[1].str();
    out.stage = m[2].str();
  } else {
    out.module = rest;  // a plain HLO file, e.g. "model.hlo"
  }
  // "jit_f.cl_12345" names the changelist; it is not part of the function.
  static const std::regex kChangelist(R"(\.cl_\d+$)");
  out.module = std::regex_replace(out.module, kChangelist, "");
  out.function = FunctionKey(out.module);
  if (out.function.empty()) return std::nullopt;
  return out;
}

Expected<std::vector<DumpFile>> ListDump(const std::string& dir,
                                         std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return MakeError("cannot list '{}': {}", dir, ec.message());
  std::vector<DumpFile> files;
  for (const fs::directory_entry& entry : it) {
    if (!entry.is_regular_file(ec)) continue;
    std::string name = entry.path().filename().string();
    std::optional<DumpName> parsed = ParseDumpName(name);
    if (!parsed) {
      if (skipped) skipped->push_back(name);
      continue;
    }
    files.push_back({entry.path().string(), std::move(*parsed), entry.file_size(ec)});
  }
  if (skipped) std::sort(skipped->begin(), skipped->end());
  return files;
}

DumpPairing PairDumps(std::vector<DumpFile> a, std::vector<DumpFile> b) {
  auto key_of = [](const DumpFile& f) { return f.name.function + " " + f.name.stage; };
  auto by_key = [&](std::vector<DumpFile>& files) {
    std::map<std::string, std::vector<DumpFile>> groups;
    for (DumpFile& f : files) groups[key_of(f)].push_back(std::move(f));
    for (auto& [key, group] : groups) {
      std::sort(group.begin(), group.end(), [](const DumpFile& x, const DumpFile& y) {
        return std::tie(x.name.module_id, x.name.file) < std::tie(y.name.module_id, y.name.file);
      });
    }
    return groups;
  };
  auto groups_a = by_key(a);
  auto groups_b = by_key(b);
  DumpPairing out;
  std::map<std::string, int> keys;
  for (auto& [key, group] : groups_a) keys[key] = 0;
  for (auto& [key, group] : groups_b) keys[key] = 0;
  for (auto& [key, unused] : keys) {
    auto& ga = groups_a[key];
    auto& gb = groups_b[key];
    for (size_t i = 0; i < std::max(ga.size(), gb.size()); ++i) {
      DumpPair pair{key, std::nullopt, std::nullopt};
      if (i < ga.size()) pair.a = std::move(ga[i]);
      if (i < gb.size()) pair.b = std::move(gb[i]);
      out.pairs.push_back(std::move(pair));
    }
  }
  return out;
}

const DumpFile* LargestModule(const std::vector<DumpFile>& files) {
  const DumpFile* best = nullptr;
  for (const DumpFile& f : files) {
    if (!best || f.bytes > best->bytes || (f.bytes == best->bytes && f.path < best->path))
      best = &f;
  }
  return best;
}

}  // namespace tileprof::analyzer
