// `tileprof cache ls|verify|explain DIR`: look after an executable cache
// directory (the original left users to manage it by hand; spec section 9).
#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>

#include "analyzer/dump_diff.h"
#include "cli/command.h"
#include "cli/session_flags.h"
#include "common/file.h"
#include "common/format.h"
#include "engine/exec/cache.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/parser.h"
#include "engine/session/session.h"
#include "version.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string directory;
  std::string model;
  TargetFlags target;
};

std::string Date(int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

std::string TargetText(const engine::TargetOptions& target) {
  std::string text = fmt::format("{} x{}", target.preset, target.num_ipus);
  if (target.tiles_per_ipu) text += fmt::format(" ({} tiles)", *target.tiles_per_ipu);
  return text;
}

int RunList(const Options& options) {
  auto entries = engine::exec::ListCache(options.directory, /*verify=*/false);
  if (!entries) {
    PrintDiagnostic("cache", entries.error().message());
    return kExitUsage;
  }
  std::cout << fmt::format("{:<16}  {:<32}  {:<22}  {:>15}  {}\n", "KEY", "MODULE", "TARGET",
                           "SIZE", "DATE (UTC)");
  for (const engine::exec::CacheEntry& entry : *entries) {
    const std::string module =
        entry.info ? entry.info->module_name : "<unreadable: see cache verify>";
    const std::string target = entry.info ? TargetText(entry.info->target) : "-";
    std::cout << fmt::format(
        "{:<16}  {:<32}  {:<22}  {:>15}  {}\n",
        entry.file_name.substr(0,
                               entry.file_name.size() - engine::exec::kExecutableExtension.size()),
        module, target, WithThousands(entry.size), Date(entry.mtime));
  }
  std::cout << fmt::format("{} executable{}\n", entries->size(), entries->size() == 1 ? "" : "s");
  return kExitOk;
}

int RunVerify(const Options& options) {
  auto entries = engine::exec::ListCache(options.directory, /*verify=*/true);
  if (!entries) {
    PrintDiagnostic("cache", entries.error().message());
    return kExitUsage;
  }
  size_t bad = 0;
  for (const engine::exec::CacheEntry& entry : *entries) {
    if (entry.problem.empty()) {
      std::cout << fmt::format("ok    {} ({}, {})\n", entry.path, entry.info->module_name,
                               TargetText(entry.info->target));
    } else {
      ++bad;
      std::cout << fmt::format("BAD   {}\n", entry.problem);
    }
  }
  std::cout << fmt::format("{} executable{} checked, {} bad\n", entries->size(),
                           entries->size() == 1 ? "" : "s", bad);
  return bad == 0 ? kExitOk : kExitError;
}

// The lines of `a` not in `b`, as "name=value" pairs of the key text.
std::vector<std::string> OptionChanges(const std::string& cached, const std::string& now) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  };
  std::vector<std::string> a = lines(cached), b = lines(now), changes;
  for (const std::string& line : b) {
    if (std::find(a.begin(), a.end(), line) != a.end()) continue;
    const std::string name = line.substr(0, line.find('='));
    std::string old_value = "(unset)";
    for (const std::string& old : a)
      if (old.substr(0, old.find('=')) == name) old_value = old.substr(old.find('=') + 1);
    changes.push_back(fmt::format("option {}: {} (cached) -> {}", name, old_value,
                                  line.substr(line.find('=') + 1)));
  }
  return changes;
}

int RunExplain(const Options& options) {
  auto env = engine::ReadEnvironment();
  if (!env) {
    PrintDiagnostic("cache", env.error().message());
    return kExitUsage;
  }
  engine::SessionOptions session = TargetSession(options.target, *env);
  auto target = engine::ResolveTarget(session);
  auto text = ReadFile(options.model);
  if (!target || !text) {
    PrintDiagnostic("cache", (!target ? target.error() : text.error()).message());
    return kExitUsage;
  }
  auto module = hlo::ParseModule(std::move(*text), {.source_name = options.model});
  if (!module) {
    std::cerr << module.error().message() << "\n";
    return kExitUsage;
  }
  const uint64_t key = engine::ExecutableCacheKey(*module, *target, session);
  const uint64_t fingerprint = hlo::Fingerprint(*module);
  const std::string target_text = engine::exec::TargetKeyText(*target);
  const std::string options_text = engine::CacheOptionsText(session);
  engine::exec::ExecutableCache cache(options.directory);
  const std::string path = cache.ExecutablePath(key);

  auto entries = engine::exec::ListCache(options.directory, /*verify=*/false);
  if (!entries) {
    PrintDiagnostic("cache", entries.error().message());
    return kExitUsage;
  }
  for (const engine::exec::CacheEntry& entry : *entries) {
    if (entry.path != path && entry.key != key) continue;
    if (!entry.problem.empty()) {
      std::cout << fmt::format(
          "Miss: {} is in the cache but unusable, it will be recompiled and replaced:\n  {}\n",
          path, entry.problem);
      return kExitError;
    }
    std::cout << fmt::format("Hit: {} would load {} from {} (saved {} UTC)\n", module->name(),
                             entry.info->module_name, entry.path, Date(entry.mtime));
    return kExitOk;
  }
  std::cout << fmt::format(
      "Miss: {} would compile: {} is not in the cache (key {:x}, module fingerprint {})\n",
      module->name(), path, key, hlo::FingerprintToString(fingerprint));

  // The closest executable: the same module compiled differently first, else
  // the cached module with the fewest differences from this one.
  const engine::exec::CacheEntry* closest = nullptr;
  std::optional<analyzer::DumpDiffResult> closest_diff;
  size_t closest_score = std::numeric_limits<size_t>::max();
  for (const engine::exec::CacheEntry& entry : *entries) {
    if (!entry.info) continue;
    if (entry.info->fingerprint == fingerprint) {
      closest = &entry;
      closest_diff.reset();
      break;
    }
    if (!entry.has_module_text) continue;
    auto diff = analyzer::DiffDumps(cache.ModuleTextPath(entry.key), options.model, {});
    if (!diff || diff->pairs.size() != 1 || !diff->pairs[0].diff) continue;
    const analyzer::ModuleDiff& d = *diff->pairs[0].diff;
    const size_t score = d.causes.size() * 1000 + static_cast<size_t>(d.dependent_changes) +
                         (d.equal_level ? 0 : 1000000) +
                         (entry.info->target.preset == target->ArchString() ? 0 : 1);
    if (score < closest_score) {
      closest_score = score;
      closest = &entry;
      closest_diff = std::move(*diff);
    }
  }
  if (closest == nullptr) {
    std::cout << fmt::format(
        "No cached module to compare with ({} executable{} in {}, none with its module text).\n",
        entries->size(), entries->size() == 1 ? "" : "s", options.directory);
    return kExitError;
  }
  const engine::exec::ExecutableInfo& info = *closest->info;
  std::cout << fmt::format("Closest cached executable: {} (module {}, saved {} UTC)\n",
                           closest->path, info.module_name, Date(closest->mtime));
  std::cout << "Why it does not match:\n";
  if (info.tool_version != TILEPROF_VERSION)
    std::cout << fmt::format("  - compiled by tileprof {}, this is tileprof {}\n",
                             info.tool_version, TILEPROF_VERSION);
  engine::TargetOptions cached_target = info.target;
  auto cached = engine::Target::Create(cached_target);
  const std::string cached_target_text =
      cached ? engine::exec::TargetKeyText(*cached) : "(invalid)";
  if (cached_target_text != target_text)
    std::cout << fmt::format("  - target: {} (cached) -> {}\n", cached_target_text, target_text);
  for (const std::string& change : OptionChanges(info.key_text, options_text))
    std::cout << fmt::format("  - {}\n", change);
  if (info.fingerprint == fingerprint) {
    std::cout << "  - the module itself is the same (equal canonical fingerprint)\n";
  } else if (closest_diff) {
    std::cout << "  - the module differs:\n\n" << analyzer::FormatDumpDiffText(*closest_diff);
  }
  return kExitError;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.require_subcommand(1);
  cmd.footer(
      "DIR is an executable cache (--executable-cache-path, "
      "TF_POPLAR_FLAGS=--executable_cache_path):\n"
      "one <key>.poplar_exec per compiled module, <key>.hlo beside it (the module's canonical "
      "text)\n"
      "and the lock files. Files can be deleted at any time; nothing else is kept.\n"
      "Exit status: ls 0; verify 0 when every executable is sound, 1 when one is not;\n"
      "explain 0 on a hit, 1 on a miss; 2 on errors.");
  CLI::App* ls = cmd.add_subcommand("ls", "List the executables: key, module, target, size, date");
  ls->add_option("DIR", options->directory, "Cache directory")->required();
  CLI::App* verify = cmd.add_subcommand(
      "verify", "Check every executable (checksum and contents), naming bad files");
  verify->add_option("DIR", options->directory, "Cache directory")->required();
  CLI::App* explain = cmd.add_subcommand("explain",
                                         "Would MODEL load from the cache? On a miss, why not: the "
                                         "closest cached module and what differs");
  explain->add_option("DIR", options->directory, "Cache directory")->required();
  explain->add_option("MODEL", options->model, "HLO text file")->required();
  AddTargetFlags(*explain, options->target);
  return [options, ls, verify] {
    if (ls->parsed()) return RunList(*options);
    if (verify->parsed()) return RunVerify(*options);
    return RunExplain(*options);
  };
}

const Registration kCache{"cache", "Executable cache: list, verify, explain a miss", Setup};

}  // namespace
}  // namespace tileprof::cli
