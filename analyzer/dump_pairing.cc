#include "analyzer/dump_pairing.h"

#include <algorithm>
#include <filesystem>
#include <map>
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
  std::string_view view(name);
  if (view.starts_with("a_inference_") && view.ends_with("__")) {
    view.remove_suffix(2);
    size_t underscore = view.rfind('_');
    if (underscore != std::string_view::npos && AllDigits(view.substr(underscore + 1)))
      name.resize(underscore);
  }
  return name;
}

std::optional<DumpName> ParseDumpName(std::string_view file_name) {
  DumpName out;
  out.file = std::string(file_name);
  std::string_view rest = file_name;
  if (!EndsWith(rest, ".txt") && !EndsWith(rest, ".hlo")) return std::nullopt;
  rest.remove_suffix(4);
  // Not HLO text, though they end in .txt.
  for (std::string_view tail : {"-buffer-assignment", "-memory-usage-report", "-live-range",
                                "-buffer-assignment-values", ".thunk_sequence", ".mlir-passes"}) {
    if (EndsWith(rest, tail)) return std::nullopt;
  }
  // Optional "<timestamp>." from --xla_dump_include_timestamp.
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits >= 10 && digits < rest.size() && rest[digits] == '.') rest.remove_prefix(digits + 1);
  // "module_<id>." from the process-global module counter.
  if (rest.starts_with("module_")) {
    size_t end = 7;
    while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') ++end;
    if (end > 7) {
      out.module_id = std::stoll(std::string(rest.substr(7, std::min<size_t>(end - 7, 15))));
      rest.remove_prefix(end < rest.size() && rest[end] == '.' ? end + 1 : end);
    }
  }
  // The stage suffix, read from the end one dot-separated token at a time.
  std::vector<std::string_view> tokens;
  for (size_t start = 0;;) {
    size_t dot = rest.find('.', start);
    tokens.push_back(rest.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  size_t n = tokens.size();
  size_t module_tokens = n;
  if (n >= 5 && tokens[n - 1].starts_with("before_") && tokens[n - 2].starts_with("after_") &&
      !tokens[n - 3].empty() && tokens[n - 4].size() == 4 && AllDigits(tokens[n - 4])) {
    // module_0004.jit_top.0004.<pipeline>.after_<pass>.before_<next>
    module_tokens = n - 4;
  } else if (n >= 2 && (tokens[n - 1] == "before_optimizations" ||
                        tokens[n - 1].ends_with("after_optimizations"))) {
    module_tokens = n - 1;
    // "sm_8.0_gpu_after_optimizations": the compute capability holds a dot.
    if (n >= 3 && !tokens[n - 1].empty() && tokens[n - 1][0] >= '0' && tokens[n - 1][0] <= '9')
      module_tokens = n - 2;
  }
  for (size_t i = 0; i < n; ++i) {
    std::string& target = i < module_tokens ? out.module : out.stage;
    if (!target.empty()) target += '.';
    target += tokens[i];
  }
  // "jit_f.cl_12345" names the changelist; it is not part of the function.
  size_t cl = out.module.rfind(".cl_");
  if (cl != std::string::npos && AllDigits(std::string_view(out.module).substr(cl + 4)))
    out.module.resize(cl);
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
