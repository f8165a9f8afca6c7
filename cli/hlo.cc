// `tileprof hlo stats|fmt|fingerprint`: the HLO front end on the command
// line, for looking at a dump without compiling or diffing it.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "common/file.h"
#include "common/format.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/printer.h"
#include "engine/hlo/stats.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  std::string format = "text";
  std::string style = "short";
  int level = 0;
};

// Parses every module of one file, or prints why it cannot and returns
// nullopt. A parse error is already in the compiler form "file:line:col:
// error: ..." with the line and a caret, so it is printed as is; a file that
// cannot be read gets the usual "tileprof: hlo:" prefix.
std::optional<std::vector<hlo::Module>> Load(const std::string& path) {
  Expected<std::string> text = ReadFile(path);
  if (!text) {
    PrintDiagnostic("hlo", text.error().message());
    return std::nullopt;
  }
  auto modules = hlo::ParseModules(std::move(*text), {.source_name = path});
  if (!modules) {
    const std::string& message = modules.error().message();
    std::cerr << message << (message.ends_with('\n') ? "" : "\n");
    return std::nullopt;
  }
  return std::move(*modules);
}

std::string StatsText(const std::string& file, const hlo::ModuleStats& stats) {
  std::string out;
  auto line = [&out](std::string_view key, std::string_view value) {
    out += fmt::format("{:<14}{}\n", key, value);
  };
  line("module", stats.name);
  line("file", file);
  line("computations", WithThousands(stats.computations));
  line("instructions", WithThousands(stats.instructions));
  line("entry", stats.entry);
  line("parameters", WithThousands(static_cast<int64_t>(stats.parameters.size())));
  size_t name_width = 0;
  for (const auto& parameter : stats.parameters)
    name_width = std::max(name_width, parameter.name.size());
  for (const auto& parameter : stats.parameters)
    out += fmt::format("  {:>4}  {:<{}}  {}\n", parameter.number, parameter.name, name_width,
                       parameter.shape);
  line("result", stats.result);
  line("peak live",
       fmt::format("{} bytes ({}, parameters {}){}", WithThousands(stats.peak_live.bytes),
                   BinarySize(static_cast<uint64_t>(stats.peak_live.bytes)),
                   BinarySize(static_cast<uint64_t>(stats.peak_live.parameter_bytes)),
                   stats.peak_live.at.empty() ? "" : fmt::format(" at {}", stats.peak_live.at)));
  line("dot FLOPs", fmt::format("{} ({} dot{})", WithThousands(stats.dot_flops),
                                WithThousands(stats.dots), stats.dots == 1 ? "" : "s"));
  line("conv FLOPs",
       fmt::format("{} ({} convolution{})", WithThousands(stats.convolution_flops),
                   WithThousands(stats.convolutions), stats.convolutions == 1 ? "" : "s"));
  if (stats.unestimated > 0)
    line("", fmt::format("{} dot/convolution FLOPs not estimated (dynamic or unknown dimensions)",
                         stats.unestimated));
  if (stats.elided_constants > 0)
    line("", fmt::format("{} constant{} printed as {{...}}: values unknown", stats.elided_constants,
                         stats.elided_constants == 1 ? "" : "s"));
  line("opcodes", "");
  size_t width = 0;
  for (const auto& [opcode, count] : stats.opcodes) width = std::max(width, opcode.size());
  for (const auto& [opcode, count] : stats.opcodes)
    out += fmt::format("  {:<{}}  {:>8}\n", opcode, width, WithThousands(count));
  return out;
}

nlohmann::ordered_json StatsJson(const std::string& file, const hlo::ModuleStats& stats) {
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const auto& p : stats.parameters)
    parameters.push_back({{"number", p.number}, {"name", p.name}, {"shape", p.shape}});
  nlohmann::ordered_json opcodes = nlohmann::ordered_json::object();
  for (const auto& [opcode, count] : stats.opcodes) opcodes[opcode] = count;
  return {{"file", file},
          {"module", stats.name},
          {"computations", stats.computations},
          {"instructions", stats.instructions},
          {"entry", stats.entry},
          {"parameters", parameters},
          {"result", stats.result},
          {"elided_constants", stats.elided_constants},
          {"dots", stats.dots},
          {"dot_flops", stats.dot_flops},
          {"convolutions", stats.convolutions},
          {"convolution_flops", stats.convolution_flops},
          {"unestimated", stats.unestimated},
          {"peak_live_bytes", stats.peak_live.bytes},
          {"peak_live_parameter_bytes", stats.peak_live.parameter_bytes},
          {"peak_live_at", stats.peak_live.at},
          {"opcodes", opcodes}};
}

// Calls `each(file, module)` for every module of every file; a file that
// does not load makes the status kExitError and the rest still run.
template <typename Each>
int ForEachModule(const Options& options, Each each) {
  int status = kExitOk;
  for (const std::string& file : options.files) {
    auto modules = Load(file);
    if (!modules) {
      status = kExitError;
      continue;
    }
    for (const hlo::Module& module : *modules) each(file, module);
  }
  return status;
}

int RunStats(const Options& options) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::string text;
  int status = ForEachModule(options, [&](const std::string& file, const hlo::Module& module) {
    hlo::ModuleStats stats = hlo::ComputeStats(module);
    if (options.format == "json") {
      all.push_back(StatsJson(file, stats));
    } else {
      if (!text.empty()) text += '\n';
      text += StatsText(file, stats);
    }
  });
  std::cout << (options.format == "json" ? all.dump(2) + "\n" : text);
  return status;
}

int RunFmt(const Options& options) {
  hlo::PrintOptions print{.style = *hlo::PrintStyleFromName(options.style), .level = options.level};
  auto modules = Load(options.files.front());
  if (!modules) return kExitError;
  std::cout << hlo::PrintModules(*modules, print);
  return kExitOk;
}

int RunFingerprint(const Options& options) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  int status = ForEachModule(options, [&](const std::string& file, const hlo::Module& module) {
    std::string fingerprint = hlo::FingerprintToString(hlo::Fingerprint(module));
    if (options.format == "json")
      all.push_back({{"file", file}, {"module", module.name()}, {"fingerprint", fingerprint}});
    else
      std::cout << fmt::format("{}  {}  {}\n", fingerprint, module.name(), file);
  });
  if (options.format == "json") std::cout << all.dump(2) << '\n';
  return status;
}

void AddFormat(CLI::App* cmd, Options* options) {
  cmd->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.require_subcommand(1);
  cmd.footer(
      "FILE is HLO text in any style XLA prints (--xla_dump_to dumps, HloModule::ToString,\n"
      "test files with several modules split by '// -----'). A parse error prints\n"
      "file:line:col, the line and a caret, and the exit status is 1.");

  CLI::App* stats = cmd.add_subcommand(
      "stats",
      "Module name, computations, instructions, opcode histogram, entry parameters and "
      "result, estimated FLOPs of dots and convolutions");
  stats->add_option("FILE", options->files, "HLO text files")->required();
  AddFormat(stats, options.get());

  CLI::App* fmt_cmd = cmd.add_subcommand("fmt", "Print a module back, pretty or canonical");
  fmt_cmd->add_option("FILE", options->files, "An HLO text file")->required()->expected(1);
  fmt_cmd
      ->add_option("--style", options->style,
                   "short (no %, no program shapes), long, legacy (long with operand shapes)")
      ->check(CLI::IsMember({"short", "long", "legacy"}))
      ->capture_default_str();
  fmt_cmd
      ->add_option("--level", options->level,
                   "Normalisation: 0 as written, 1 cosmetic, 2 no names' .N suffixes or metadata, "
                   "3 structural (renamed, reordered: what the fingerprint hashes), 4 no "
                   "backend_config or float constants, 5 entry signature only")
      ->check(CLI::Range(0, 5))
      ->capture_default_str();

  CLI::App* fingerprint = cmd.add_subcommand(
      "fingerprint",
      "One 0x... line per module: the 64-bit hash of its level-3 canonical form, "
      "unchanged by renaming, metadata and computation order");
  fingerprint->add_option("FILE", options->files, "HLO text files")->required();
  AddFormat(fingerprint, options.get());

  return [options, stats, fingerprint] {
    if (stats->parsed()) return RunStats(*options);
    if (fingerprint->parsed()) return RunFingerprint(*options);
    return RunFmt(*options);
  };
}

const Registration kHlo{
    "hlo", "Inspect HLO text: statistics, pretty/canonical printing, fingerprints", Setup};

}  // namespace
}  // namespace tileprof::cli
