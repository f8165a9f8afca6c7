#include "engine/session/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <variant>
#include <vector>

namespace tileprof::engine {
namespace {

using FlagMember =
    std::variant<bool PoplarFlags::*, int64_t PoplarFlags::*, std::string PoplarFlags::*>;

struct FlagSpec {
  std::string_view name;
  FlagMember member;
  std::string_view help;
  bool in_key;  // changes the compiled program (spec 2.4)
};

// The original's flags and help texts, TF-HEAD order.
const std::array<FlagSpec, 26> kFlags = {{
    {"help", &PoplarFlags::help, "Print all the flag help.", false},
    {"use_synthetic_data", &PoplarFlags::use_synthetic_data,
     "Prevent the use of host<->IPU data transfers.", true},
    {"synthetic_data_categories", &PoplarFlags::synthetic_data_categories,
     "Comma separated categories of data to make synthetic: infeed, outfeed, seed, hostembedding, "
     "parameters.",
     true},
    {"synthetic_data_initializer", &PoplarFlags::synthetic_data_initializer,
     "How to initialise synthetic data: random, uniform, normal or an integer constant.", true},
    {"use_ipu_model", &PoplarFlags::use_ipu_model, "Run on the IPU Model instead of IPU hardware.",
     true},
    {"ipu_model_tiles", &PoplarFlags::ipu_model_tiles,
     "Tiles per IPU of the IPU Model (-1: the target's).", true},
    {"log_cycle_count", &PoplarFlags::log_cycle_count,
     "Tile on which to count main-graph cycles; each run logs 'Cycle count: <n>' (-1: off).", true},
    {"while_loop_brute_force_max_trip_count", &PoplarFlags::while_loop_brute_force_max_trip_count,
     "Maximum iterations simulated when converting while loops to repeats.", true},
    {"max_compilation_threads", &PoplarFlags::max_compilation_threads,
     "Threads used to compile (-1: all cores).", false},
    {"max_infeed_threads", &PoplarFlags::max_infeed_threads, "Threads per infeed (-1: default).",
     false},
    {"executable_cache_path", &PoplarFlags::executable_cache_path,
     "Directory of the executable cache; enables it.", false},
    {"dump_schedule_as_dot", &PoplarFlags::dump_schedule_as_dot, "Dump the scheduler graph as DOT.",
     false},
    {"tensor_map_file_path", &PoplarFlags::tensor_map_file_path,
     "Directory to write <module>.tensor_map.json into.", false},
    {"fallback_scheduler", &PoplarFlags::fallback_scheduler, "Use the sync list scheduler.", true},
    {"allow_nans", &PoplarFlags::allow_nans, "Allow NaNs.", true},
    {"null_data_feed", &PoplarFlags::null_data_feed, "Infeeds send garbage data (benchmarking).",
     false},
    {"show_progress_bar", &PoplarFlags::show_progress_bar,
     "Show the compile progress bar: true, false or auto.", false},
    {"use_on_demand", &PoplarFlags::use_on_demand, "Force the ON_DEMAND device connection.", false},
    {"on_demand_device_poll_time", &PoplarFlags::on_demand_device_poll_time,
     "Milliseconds between ON_DEMAND device polls (at least 100).", false},
    {"on_demand_device_timeout", &PoplarFlags::on_demand_device_timeout,
     "Milliseconds to wait for an ON_DEMAND device.", false},
    {"sync_replica_start", &PoplarFlags::sync_replica_start,
     "Global sync at the start of the main program.", true},
    {"enable_hlo_verifier", &PoplarFlags::enable_hlo_verifier,
     "Run the HLO verifier around every pass.", false},
    {"disable_poplar_version_check", &PoplarFlags::disable_poplar_version_check,
     "Do not check the Poplar version.", true},
    {"save_vertex_graph", &PoplarFlags::save_vertex_graph,
     "Non-functional: use the target.saveOutputVertexGraph engine option.", false},
    {"save_interval_report", &PoplarFlags::save_interval_report,
     "Directory for <module>.csv interval reports (removed in SDK 2.5; accepted, ignored).", false},
    {"dump_text_reports_to_stdio", &PoplarFlags::dump_text_reports_to_stdio,
     "Also print text reports to stdout (removed in SDK 2.3; accepted, ignored).", false},
}};

// Flags the original still accepts and ignores.
constexpr std::array<std::string_view, 3> kNoOpFlags = {
    "add_all_reduce_copies", "force_replicated_mode", "save_oom_profiler"};

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "true" || lower == "1") return true;
  if (lower == "false" || lower == "0") return false;
  return std::nullopt;
}

std::string FlagNames() {
  std::string names;
  for (const FlagSpec& flag : kFlags)
    names += (names.empty() ? "--" : ", --") + std::string(flag.name);
  return names;
}

Status SetFlag(PoplarFlags& flags, const FlagSpec& spec, std::optional<std::string_view> value) {
  return std::visit(
      [&](auto member) -> Status {
        using T = std::remove_cvref_t<decltype(flags.*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          std::optional<bool> parsed = value ? ParseBool(*value) : std::optional<bool>(true);
          if (!parsed)
            return MakeError("--{}: '{}' is not a boolean (true, false, 1, 0)", spec.name, *value);
          flags.*member = *parsed;
        } else if constexpr (std::is_same_v<T, int64_t>) {
          if (!value) return MakeError("--{} needs a value: --{}=N", spec.name, spec.name);
          int64_t parsed = 0;
          auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
          if (ec != std::errc() || end != value->data() + value->size())
            return MakeError("--{}: '{}' is not an integer", spec.name, *value);
          flags.*member = parsed;
        } else {
          static_assert(std::is_same_v<T, std::string>);
          if (!value) return MakeError("--{} needs a value: --{}=VALUE", spec.name, spec.name);
          flags.*member = std::string(*value);
        }
        return {};
      },
      spec.member);
}

Status CheckFlags(const PoplarFlags& flags) {
  if (flags.show_progress_bar != "auto" && flags.show_progress_bar != "true" &&
      flags.show_progress_bar != "false")
    return MakeError("--show_progress_bar: '{}' is not one of true, false, auto",
                     flags.show_progress_bar);
  static const std::set<std::string, std::less<>> kCategories = {"infeed", "outfeed", "seed",
                                                                 "hostembedding", "parameters"};
  std::string_view categories = flags.synthetic_data_categories;
  while (!categories.empty()) {
    size_t comma = categories.find(',');
    std::string_view category = categories.substr(0, comma);
    if (!kCategories.contains(category))
      return MakeError(
          "--synthetic_data_categories: unknown category '{}' (valid: infeed, outfeed, seed, "
          "hostembedding, parameters)",
          category);
    categories = comma == std::string_view::npos ? "" : categories.substr(comma + 1);
  }
  if (!flags.synthetic_data_initializer.empty()) {
    if (!flags.use_synthetic_data && flags.synthetic_data_categories.empty())
      return MakeError("--synthetic_data_initializer is only valid with --use_synthetic_data");
    const std::string& init = flags.synthetic_data_initializer;
    int64_t constant = 0;
    auto [end, ec] = std::from_chars(init.data(), init.data() + init.size(), constant);
    bool integer = ec == std::errc() && end == init.data() + init.size();
    if (init != "random" && init != "uniform" && init != "normal" && !integer)
      return MakeError(
          "--synthetic_data_initializer: '{}' is not random, uniform, normal or an integer", init);
  }
  if (flags.on_demand_device_poll_time < 100)
    return MakeError("--on_demand_device_poll_time: {} ms is below the minimum of 100 ms",
                     flags.on_demand_device_poll_time);
  return {};
}

// The engine option keys of spec 7.2 and 8.3. Those tileprof acts on are
// typed by EngineOptions; the rest are accepted so a user's existing
// POPLAR_ENGINE_OPTIONS works unchanged.
const std::set<std::string, std::less<>> kEngineKeys = {
    "autoReport.all",
    "autoReport.directory",
    "autoReport.outputGraphProfile",
    "autoReport.outputExecutionProfile",
    "autoReport.executionProfileProgramRunCount",
    "autoReport.outputSerializedGraph",
    "autoReport.outputDebugInfo",
    "autoReport.outputArchive",
    "debug.allowOutOfMemory",
    "debug.instrument",
    "debug.instrumentCompute",
    "debug.instrumentExternalExchange",
    "debug.instrumentControlFlow",
    "debug.computeInstrumentationLevel",
    "debug.retainDebugInformation",
    "debug.loweredVarDumpFile",
    "target.saveArchive",
    "target.saveOutputVertexGraph",
    "profiler.format",
    "profiler.blocks.tile",
    "profiler.blocks.bufferSize",
    "profiler.blocks.implicitFlush",
    "profiler.blocks.filter",
    "profiler.programs.filter",
    "opt.maxCompilationThreads",
    "exchange.streamBufferOverlap",
    "exchange.enablePrefetch",
    "target.syncReplicasIndependently"};

const std::set<std::string, std::less<>> kBooleanEngineKeys = {"autoReport.all",
                                                               "autoReport.outputGraphProfile",
                                                               "autoReport.outputExecutionProfile",
                                                               "autoReport.outputSerializedGraph",
                                                               "autoReport.outputDebugInfo",
                                                               "autoReport.outputArchive",
                                                               "debug.allowOutOfMemory",
                                                               "debug.instrument",
                                                               "debug.instrumentCompute",
                                                               "debug.instrumentExternalExchange",
                                                               "debug.instrumentControlFlow",
                                                               "debug.retainDebugInformation",
                                                               "profiler.blocks.implicitFlush",
                                                               "exchange.enablePrefetch",
                                                               "target.syncReplicasIndependently"};

std::string JoinKeys(const std::set<std::string, std::less<>>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "" : ", ") + key;
  return out;
}

}  // namespace

Expected<PoplarFlags> ParsePoplarFlags(std::string_view text) {
  PoplarFlags flags;
  size_t pos = 0;
  while (pos < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[pos]))) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    std::string_view token = text.substr(pos, end - pos);
    pos = end;
    if (!token.starts_with("--"))
      return MakeError("TF_POPLAR_FLAGS: '{}' is not a flag; flags look like --name=value", token);
    token.remove_prefix(2);
    size_t equals = token.find('=');
    std::string_view name = token.substr(0, equals);
    std::optional<std::string_view> value;
    if (equals != std::string_view::npos) value = token.substr(equals + 1);
    if (std::find(kNoOpFlags.begin(), kNoOpFlags.end(), name) != kNoOpFlags.end()) continue;
    auto spec = std::find_if(kFlags.begin(), kFlags.end(),
                             [&](const FlagSpec& f) { return f.name == name; });
    if (spec == kFlags.end())
      return MakeError("TF_POPLAR_FLAGS: unknown flag --{}; valid flags: {}", name, FlagNames());
    Status status = SetFlag(flags, *spec, value);
    if (!status) return status.error().Within("TF_POPLAR_FLAGS");
  }
  Status checked = CheckFlags(flags);
  if (!checked) return checked.error().Within("TF_POPLAR_FLAGS");
  return flags;
}

std::string PoplarFlagsUsage() {
  std::string out = "Usage for TF_POPLAR_FLAGS is:\n";
  for (const FlagSpec& flag : kFlags) out += fmt::format("\t--{}: {}\n", flag.name, flag.help);
  return out;
}

std::optional<std::string> EngineOptions::Get(std::string_view key) const {
  auto it = values.find(std::string(key));
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Expected<bool> EngineOptions::GetBool(std::string_view key, bool fallback) const {
  std::optional<std::string> value = Get(key);
  if (!value) return fallback;
  std::optional<bool> parsed = ParseBool(*value);
  if (!parsed)
    return MakeError("POPLAR_ENGINE_OPTIONS: {}: '{}' is not true or false", key, *value);
  return *parsed;
}

// Values were checked by ParseEngineOptions, so the fallbacks below only
// apply to options built by hand.
bool EngineOptions::AutoReportAll() const {
  auto v = GetBool("autoReport.all", false);
  return v && *v;
}
std::string EngineOptions::AutoReportDirectory() const {
  return Get("autoReport.directory").value_or("");
}
bool EngineOptions::OutputGraphProfile() const {
  auto v = GetBool("autoReport.outputGraphProfile", AutoReportAll());
  return v && *v;
}
bool EngineOptions::OutputExecutionProfile() const {
  auto v = GetBool("autoReport.outputExecutionProfile", AutoReportAll());
  return v && *v;
}
bool EngineOptions::AllowOutOfMemory() const {
  auto v = GetBool("debug.allowOutOfMemory", true);
  return !v || *v;
}
std::string EngineOptions::SaveArchive() const { return Get("target.saveArchive").value_or(""); }

Expected<EngineOptions> ParseEngineOptions(std::string_view json) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return MakeError("POPLAR_ENGINE_OPTIONS: not valid JSON: {}", json);
  if (!doc.is_object())
    return MakeError("POPLAR_ENGINE_OPTIONS: expected a JSON object of options");
  EngineOptions options;
  for (const auto& [key, value] : doc.items()) {
    if (!kEngineKeys.contains(key))
      return MakeError("POPLAR_ENGINE_OPTIONS: unknown option '{}'; valid options: {}", key,
                       JoinKeys(kEngineKeys));
    std::string text;
    if (value.is_string())
      text = value.get<std::string>();
    else if (value.is_boolean() || value.is_number())
      text = value.dump();
    else
      return MakeError("POPLAR_ENGINE_OPTIONS: {}: expected a string value, got {}", key,
                       value.dump());
    if (kBooleanEngineKeys.contains(key) && !ParseBool(text))
      return MakeError("POPLAR_ENGINE_OPTIONS: {}: '{}' is not true or false", key, text);
    if (key == "debug.computeInstrumentationLevel" && text != "device" && text != "ipu" &&
        text != "tile" && text != "vertex")
      return MakeError(
          "POPLAR_ENGINE_OPTIONS: debug.computeInstrumentationLevel: '{}' is not device, ipu, "
          "tile or vertex",
          text);
    options.values[key] = text;
  }
  return options;
}

std::optional<ExecutionProfile> ParseExecutionProfile(std::string_view text) {
  if (text == "none" || text == "NO_PROFILE" || text == "false") return ExecutionProfile::kNone;
  if (text == "device" || text == "DEVICE_PROFILE" || text == "true")
    return ExecutionProfile::kDevice;
  if (text == "ipu" || text == "IPU_PROFILE") return ExecutionProfile::kIpu;
  if (text == "tile" || text == "TILE_PROFILE") return ExecutionProfile::kTile;
  return std::nullopt;
}

std::string_view ReportConfig::ReportExtension() const {
  if (use_poplar_text_report) return "txt";
  if (use_poplar_cbor_report) return "cbor";
  return "json";
}

Expected<ReportConfig> ParseReportConfig(std::string_view json, ReportConfig config) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return MakeError("not valid JSON");
  if (!doc.is_object()) return MakeError("expected a JSON object of report options");
  using BoolMember = bool ReportConfig::*;
  static const std::map<std::string, BoolMember, std::less<>> kBools = {
      {"profiling", &ReportConfig::profiling},
      {"enable_ipu_events", &ReportConfig::enable_ipu_events},
      {"use_poplar_text_report", &ReportConfig::use_poplar_text_report},
      {"use_poplar_cbor_report", &ReportConfig::use_poplar_cbor_report},
      {"enable_poplar_serialized_graph", &ReportConfig::enable_poplar_serialized_graph}};
  const std::string kValid =
      "profiling, enable_ipu_events, use_poplar_text_report, use_poplar_cbor_report, "
      "profile_execution, "
      "enable_poplar_serialized_graph, report_every_nth_execution, max_report_size, "
      "report_directory, "
      "device_connection, ipu_version, text_report, json_report, cbor_report, profile_db, "
      "tensor_map, events";
  using FileMember = std::string ReportFiles::*;
  static const std::map<std::string, FileMember, std::less<>> kFiles = {
      {"text_report", &ReportFiles::text},      {"json_report", &ReportFiles::json},
      {"cbor_report", &ReportFiles::cbor},      {"profile_db", &ReportFiles::sqlite},
      {"tensor_map", &ReportFiles::tensor_map}, {"events", &ReportFiles::events}};
  for (const auto& [key, value] : doc.items()) {
    if (auto b = kBools.find(key); b != kBools.end()) {
      if (!value.is_boolean())
        return MakeError("{}: expected true or false, got {}", key, value.dump());
      config.*(b->second) = value.get<bool>();
    } else if (key == "profile_execution") {
      std::optional<ExecutionProfile> profile;
      if (value.is_boolean())
        profile = value.get<bool>() ? ExecutionProfile::kDevice : ExecutionProfile::kNone;
      else if (value.is_string())
        profile = ParseExecutionProfile(value.get<std::string>());
      if (!profile)
        return MakeError(
            "profile_execution: expected true, false, \"device\", \"ipu\" or \"tile\", got {}",
            value.dump());
      config.profile_execution = *profile;
    } else if (key == "report_every_nth_execution" || key == "max_report_size") {
      if (!value.is_number_unsigned())
        return MakeError("{}: expected a non-negative integer, got {}", key, value.dump());
      if (key == "max_report_size")
        config.max_report_size = value.get<uint64_t>();
      else
        config.report_every_nth_execution = value.get<int64_t>();
    } else if (key == "report_directory" || key == "device_connection" || key == "ipu_version") {
      if (!value.is_string()) return MakeError("{}: expected a string, got {}", key, value.dump());
      std::string text = value.get<std::string>();
      if (key == "device_connection" && text != "always" && text != "pre-compile" &&
          text != "never")
        return MakeError("device_connection: '{}' is not always, pre-compile or never", text);
      if (key == "ipu_version" && text != "ipu1" && text != "ipu2" && text != "ipu21")
        return MakeError("ipu_version: '{}' is not ipu1, ipu2 or ipu21", text);
      (key == "report_directory"    ? config.report_directory
       : key == "device_connection" ? config.device_connection
                                    : config.ipu_version) = text;
    } else if (auto f = kFiles.find(key); f != kFiles.end()) {
      if (!value.is_string() || value.get<std::string>().empty())
        return MakeError("{}: expected a file name, got {}", key, value.dump());
      config.files.*(f->second) = value.get<std::string>();
    } else {
      return MakeError("unknown option '{}'; valid options: {}", key, kValid);
    }
  }
  return config;
}

std::string CompileKeyText(const PoplarFlags& flags, const EngineOptions& engine) {
  (void)engine;  // no engine option tileprof honours changes the program (see options.h)
  std::string out;
  for (const FlagSpec& spec : kFlags) {
    if (!spec.in_key) continue;
    out += spec.name;
    out += '=';
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(flags.*member)>;
          if constexpr (std::is_same_v<T, bool>)
            out += flags.*member ? "true" : "false";
          else if constexpr (std::is_same_v<T, int64_t>)
            out += std::to_string(flags.*member);
          else {
            static_assert(std::is_same_v<T, std::string>);
            out += flags.*member;
          }
        },
        spec.member);
    out += '\n';
  }
  return out;
}

}  // namespace tileprof::engine
