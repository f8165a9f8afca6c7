// Report codec benchmark (issue 7, bench/reports/compare.sh drives it):
//
//   report_bench formats MODEL.hlo [REPS]   compile MODEL for ipu2 (1,472
//       tiles) and time writing and reading the compilation report in each
//       format (text, JSON, CBOR, SQLite): best of REPS, file sizes, and a
//       check that what is read back equals what was written (the text
//       report holds the printed figures only, so it is checked by printing
//       it again);
//   report_bench generate OUT.json MIB     a synthetic JSON report of about MIB
//       MiB: 64 IPUs x 1,472 tiles with per-tile memory and vertex
//       types, variables, compute sets, programs and tile-level execution
//       steps, in the proportions of a large compiled graph;
//   report_bench read FILE                 read a report of any format (the
//       streaming readers) and print what it holds, for /usr/bin/time.
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/file.h"
#include "engine/compiler/compiler.h"
#include "engine/hlo/parser.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/report_file.h"
#include "reports/sqlite_profile.h"
#include "reports/text_reader.h"
#include "reports/text_writer.h"

namespace {

using namespace tileprof;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "report_bench: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
T Must(Expected<T> value, const char* what) {
  if (!value) Die(std::string(what) + ": " + value.error().message());
  return std::move(*value);
}

void MustOk(Status status, const char* what) {
  if (!status) Die(std::string(what) + ": " + status.error().message());
}

int Formats(const std::string& model, int reps) {
  std::string text = Must(ReadFile(model), "read");
  hlo::Module module = Must(hlo::ParseModule(std::move(text), {.source_name = model}), "parse");
  engine::Target target = Must(engine::Target::FromPreset("ipu2"), "target");
  auto start = Clock::now();
  engine::compiler::CompileResult result =
      Must(engine::compiler::CompileModule(module, target, {}), "compile");
  std::printf("%s: %zu instructions, compiled for ipu2 (%zu tiles, %zu vertex types) in %.0f ms\n",
              std::filesystem::path(model).filename().c_str(),
              static_cast<size_t>(module.instruction_count()), result.report.tiles.size(),
              result.report.vertex_types.size(), Since(start));
  const report::ReportDocument document{result.report, std::nullopt};
  const std::string dir =
      std::filesystem::temp_directory_path() / fmt::format("report_bench_{}", getpid());
  std::filesystem::create_directories(dir);

  struct Codec {
    const char* name;
    std::string file;
    std::function<void()> write;
    std::function<bool()> read_and_check;  // true when the read-back matches
  };
  const std::string text_report = report::WriteTextReport(result.report, nullptr, {});
  std::vector<Codec> codecs = {
      {"text", dir + "/r.rep",
       [&] {
         MustOk(
             WriteFileAtomic(dir + "/r.rep", report::WriteTextReport(result.report, nullptr, {})),
             "w");
       },
       [&] {
         std::string bytes = Must(ReadFile(dir + "/r.rep"), "read");
         report::ParsedTextReport parsed = Must(report::ReadTextReport(bytes, "r.rep"), "text");
         return report::WriteTextReport(parsed.compilation, nullptr, {}) == text_report;
       }},
      {"JSON", dir + "/r.json",
       [&] { MustOk(report::WriteJsonReportFile(dir + "/r.json", document), "w"); },
       [&] { return Must(report::ReadJsonReportFile(dir + "/r.json"), "json") == document; }},
      {"CBOR", dir + "/r.cbor",
       [&] { MustOk(report::WriteCborReportFile(dir + "/r.cbor", document), "w"); },
       [&] { return Must(report::ReadCborReportFile(dir + "/r.cbor"), "cbor") == document; }},
      {"SQLite", dir + "/r.db",
       [&] { MustOk(report::WriteProfileDatabase(dir + "/r.db", document), "w"); },
       [&] { return Must(report::ReadProfileDatabase(dir + "/r.db"), "sqlite") == document; }},
  };
  std::printf("%-7s %12s %12s %12s  %s\n", "format", "size", "write ms", "read ms", "read back");
  for (Codec& codec : codecs) {
    double best_write = 1e300, best_read = 1e300;
    bool same = true;
    for (int i = 0; i < reps; ++i) {
      auto w = Clock::now();
      codec.write();
      best_write = std::min(best_write, Since(w));
      auto r = Clock::now();
      same = codec.read_and_check() && same;
      best_read = std::min(best_read, Since(r));
    }
    std::printf("%-7s %12s %12.1f %12.1f  %s\n", codec.name,
                fmt::format("{:.2f} MB", std::filesystem::file_size(codec.file) / 1e6).c_str(),
                best_write, best_read, same ? "identical" : "DIFFERENT");
    if (!same) Die(std::string(codec.name) + ": the report read back differs");
  }
  std::filesystem::remove_all(dir);
  return 0;
}

// Deterministic pseudo-random numbers (xorshift), so every run generates the
// same report.
struct Random {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t Next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  uint64_t Below(uint64_t n) { return Next() % n; }
};

int Generate(const std::string& out, double megabytes) {
  using namespace report;
  constexpr uint32_t kIpus = 64, kTilesPerIpu = 1472;
  constexpr uint32_t kTiles = kIpus * kTilesPerIpu;
  Random random;
  ReportDocument document;
  CompilationReport& c = document.compilation.emplace();
  c.target = MakeTarget("ipu2", kIpus, kTilesPerIpu, 638976, 1.33e9);
  c.graph = GraphInfo{kTiles * 40ull, kTiles * 120ull, kTiles * 30ull, 4000};
  for (int i = 0; i < 48; ++i)
    c.vertex_types.push_back(
        {fmt::format("popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::OP{},float>", i)});
  for (uint32_t tile = 0; tile < kTiles; ++tile) {
    TileMemory m;
    m.tile = tile;
    uint64_t total = 0;
    for (size_t k = 0; k < kNumCategories; ++k) total += (m.by_category[k] = random.Below(20000));
    m.by_region[0] = {total, total + random.Below(4096)};
    m.always_live = total / 2;
    m.not_always_live = total - total / 2;
    for (int v = 0; v < 6; ++v)
      m.vertex_types.push_back({static_cast<uint32_t>(random.Below(48)), random.Below(5000)});
    uint64_t vd = 0;
    for (Category k : kVertexDataCategories) vd += At(m.by_category, k);
    m.vertex_data[0] = vd;
    c.tiles.push_back(std::move(m));
  }
  for (int i = 0; i < 4000; ++i) {
    ComputeSet cs{fmt::format("layer{}/conv{}/Conv_{}/Convolve", i / 40, i % 40, i), {}};
    cs.vertices.push_back({static_cast<uint32_t>(random.Below(48)), random.Below(100000)});
    c.compute_sets.push_back(std::move(cs));
    c.programs.push_back({fmt::format("prog{}", i), "Execute", {}, static_cast<uint32_t>(i)});
  }
  ExecutionReport& e = document.execution.emplace();
  e.programs = {"main"};
  e.clock_hz = 1.33e9;
  // Variables and tile-level steps fill the rest, half each by bytes; their
  // JSON sizes are measured on samples.
  auto make_variable = [&](size_t i) {
    return Variable{fmt::format("layer{}/dense{}/kernel/Read/ReadVariableOp{}", i % 97, i % 31, i),
                    static_cast<uint32_t>(random.Below(kTiles)),
                    random.Below(65536),
                    Category::kVariables,
                    random.Below(2) == 0,
                    random.Below(600000)};
  };
  auto make_step = [&](size_t s) {
    ExecutionStep step{fmt::format("layer{}/Conv_{}/Convolve", s % 50, s), 0, {}};
    step.cycles_by_tile.resize(kTiles);
    for (uint64_t& cycles : step.cycles_by_tile) {
      cycles = random.Below(60000);
      step.cycles = std::max(step.cycles, cycles);
    }
    return step;
  };
  const double fixed = static_cast<double>(WriteJsonReport(document).size());
  ReportDocument sample;
  CompilationReport& sample_compilation = sample.compilation.emplace();
  for (size_t i = 0; i < 1000; ++i) sample_compilation.variables.push_back(make_variable(i));
  const double per_variable = static_cast<double>(WriteJsonReport(sample).size()) / 1000;
  sample = {};
  sample.execution.emplace().steps.push_back(make_step(0));
  const double per_step = static_cast<double>(WriteJsonReport(sample).size());
  const double remaining = std::max(0.0, megabytes * (1 << 20) - fixed);
  const size_t variables = static_cast<size_t>(remaining / 2 / per_variable);
  const size_t steps = static_cast<size_t>(remaining / 2 / per_step);
  for (size_t i = 0; i < variables; ++i) c.variables.push_back(make_variable(i));
  for (size_t s = 0; s < steps; ++s) {
    e.steps.push_back(make_step(s));
    e.total_cycles += e.steps.back().cycles;
  }
  MustOk(WriteJsonReportFile(out, document), "write");
  std::printf("%s: %.1f MiB, %u tiles, %zu variables, %zu steps of %u tiles\n", out.c_str(),
              std::filesystem::file_size(out) / 1048576.0, kTiles, variables, steps, kTiles);
  return 0;
}

int Read(const std::string& path) {
  report::ReportDocument document = Must(report::ReadReportFile(path), "read");
  size_t tiles = document.compilation ? document.compilation->tiles.size() : 0;
  size_t variables = document.compilation ? document.compilation->variables.size() : 0;
  size_t steps = document.execution ? document.execution->steps.size() : 0;
  std::printf("%s: %zu tiles, %zu variables, %zu execution steps\n", path.c_str(), tiles, variables,
              steps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "formats")
    return Formats(args[1], args.size() > 2 ? std::stoi(args[2]) : 3);
  if (args.size() == 3 && args[0] == "generate") return Generate(args[1], std::stod(args[2]));
  if (args.size() == 2 && args[0] == "read") return Read(args[1]);
  std::fprintf(stderr,
               "usage: report_bench formats MODEL.hlo [REPS] | generate OUT.json MB | read FILE\n");
  return 2;
}
