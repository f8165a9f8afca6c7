// `tileprof cache ls|verify|explain DIR`: look after an executable cache
// directory (the original left users to manage it by hand; spec section 9).
#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <iostream>

#include "analyzer/dump_diff.h"
#include "cli/command.h"
#include "cli/session_flags.h"
#include "common/file.h"
#include "common/format.h"
#include "engine/exec/cache.h"
#include "engine/exec/cache_explain.h"
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

// The analyzer's dump diff of the module text kept beside `entry` and
// `model`, for ExplainLookup.
std::optional<engine::exec::ModuleDifference> CompareWithCached(
    const engine::exec::ExecutableCache& cache, const engine::exec::CacheEntry& entry,
    const std::string& model) {
  auto diff = analyzer::DiffDumps(cache.ModuleTextPath(entry.key), model, {});
  if (!diff || diff->pairs.size() != 1 || !diff->pairs[0].diff) return std::nullopt;
  const analyzer::ModuleDiff& d = *diff->pairs[0].diff;
  return engine::exec::ModuleDifference{
      .causes = d.causes.size(),
      .dependent_changes = static_cast<uint64_t>(d.dependent_changes),
      .equal_at_some_level = d.equal_level.has_value(),
      .text = analyzer::FormatDumpDiffText(*diff)};
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
  engine::exec::ExecutableCache cache(options.directory);
  engine::exec::CacheQuery query;
  query.key = engine::ExecutableCacheKey(*module, *target, session);
  query.path = cache.ExecutablePath(query.key);
  query.fingerprint = hlo::Fingerprint(*module);
  query.target_arch = std::string(target->ArchString());
  query.target_text = engine::exec::TargetKeyText(*target);
  query.options_text = engine::CacheOptionsText(session);
  query.tool_version = TILEPROF_VERSION;

  auto entries = engine::exec::ListCache(options.directory, /*verify=*/false);
  if (!entries) {
    PrintDiagnostic("cache", entries.error().message());
    return kExitUsage;
  }
  const engine::exec::CacheExplanation why =
      engine::exec::ExplainLookup(*entries, query, [&](const engine::exec::CacheEntry& entry) {
        return CompareWithCached(cache, entry, options.model);
      });
  using Kind = engine::exec::CacheExplanation::Kind;
  if (why.kind == Kind::kUnusable) {
    std::cout << fmt::format(
        "Miss: {} is in the cache but unusable, it will be recompiled and replaced:\n  {}\n",
        query.path, why.entry->problem);
    return kExitError;
  }
  if (why.kind == Kind::kHit) {
    std::cout << fmt::format("Hit: {} would load {} from {} (saved {} UTC)\n", module->name(),
                             why.entry->info->module_name, why.entry->path, Date(why.entry->mtime));
    return kExitOk;
  }
  std::cout << fmt::format(
      "Miss: {} would compile: {} is not in the cache (key {:x}, module fingerprint {})\n",
      module->name(), query.path, query.key, hlo::FingerprintToString(query.fingerprint));
  if (why.entry == nullptr) {
    std::cout << fmt::format(
        "No cached module to compare with ({} executable{} in {}, none with its module text).\n",
        entries->size(), entries->size() == 1 ? "" : "s", options.directory);
    return kExitError;
  }
  std::cout << fmt::format("Closest cached executable: {} (module {}, saved {} UTC)\n",
                           why.entry->path, why.entry->info->module_name, Date(why.entry->mtime));
  std::cout << "Why it does not match:\n";
  for (const std::string& reason : why.reasons) std::cout << fmt::format("  - {}\n", reason);
  if (why.same_module) {
    std::cout << "  - the module itself is the same (equal canonical fingerprint)\n";
  } else if (why.module_difference) {
    std::cout << "  - the module differs:\n\n" << *why.module_difference;
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
