// Compile time against executable-cache load time, in one process and one
// run, for the mobilenet_v2 corpus module on a full ipu2 (or the module
// given). Each figure is the median of --runs wall-clock measurements:
//   compile        CompileHloFile: parse + compile, no cache
//   miss           LoadOrCompile on an empty cache: compile + serialise + write
//   hit (report)   LoadOrCompile, LoadParts::kReport: what `tileprof compile` does
//   hit (full)     LoadOrCompile, LoadParts::kAll: graph and program rebuilt, what
//                  `tileprof run` needs
// Every hit's text report is checked byte for byte against the compile's.
// CPU time (user + system, all threads) is printed beside wall time: on a
// shared machine it is the steadier figure.
//
// Usage: cache_bench [MODEL.hlo] [--runs N]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "engine/session/session.h"
#include "reports/text_writer.h"

namespace {

using namespace tileprof;
using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Times {
  std::vector<double> wall, cpu;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The table: each phase's median wall and CPU time and its ratio to a
// compile, and whether a cache hit meets the 20x goal.
void PrintTimes(const std::string& model, int runs, uint64_t file_size, const Times& compile,
                const Times& miss, const Times& hit_report, const Times& hit_full) {
  const double base = Median(compile.wall), base_cpu = Median(compile.cpu);
  fmt::print("{} on ipu2 (1 IPU, 1,472 tiles), median of {} run{}, executable {:.1f} MB\n",
             std::filesystem::path(model).filename().string(), runs, runs == 1 ? "" : "s",
             file_size / 1e6);
  fmt::print("  {:<14} {:>9}  {:>8}   {:>9}  {:>8}\n", "", "wall", "ratio", "cpu", "ratio");
  const auto row = [&](std::string_view name, const Times& times) {
    const double wall = Median(times.wall), cpu = Median(times.cpu);
    fmt::print("  {:<14} {:8.3f}s  {:7.1f}x   {:8.3f}s  {:7.1f}x\n", name, wall, base / wall, cpu,
               base_cpu / std::max(cpu, 1e-3));
  };
  row("compile", compile);
  row("miss", miss);
  row("hit (report)", hit_report);
  row("hit (full)", hit_full);
  const double ratio = base / Median(hit_report.wall);
  fmt::print(
      "ratio = compile time / this time. goal: a cache hit of `tileprof compile` >= 20x faster "
      "than\n"
      "compiling (wall): {} ({:.0f}x); a full rebuild of the graph for `run`: {:.1f}x\n",
      ratio >= 20 ? "met" : "NOT met", ratio, base / Median(hit_full.wall));
}

}  // namespace

int main(int argc, char** argv) {
  std::string model =
      std::string(TILEPROF_SHARED_DIR) + "/corpus/hlo/xla_tools_data_benchmarking_mobilenet_v2.hlo";
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else
      model = arg;
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / fmt::format("tileprof_cache_bench_{}", ::getpid()))
          .string();
  std::filesystem::remove_all(dir);

  engine::SessionOptions options;
  options.progress = engine::ProgressMode::kOff;
  engine::CompileLog log;
  const auto time = [](Times& times, auto&& f) {
    auto start = Clock::now();
    const double cpu = CpuSeconds();
    f();
    times.cpu.push_back(CpuSeconds() - cpu);
    times.wall.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  };
  const auto fail = [&](const Error& error) {
    fmt::print(stderr, "cache_bench: {}\n", error.message());
    std::filesystem::remove_all(dir);
    return 1;
  };

  std::string expected;
  Times compile, miss, hit_report, hit_full;
  for (int run = 0; run < runs; ++run) {
    std::optional<Error> error;
    time(compile, [&] {
      auto compiled = engine::CompileHloFile(model, options, log);
      if (!compiled)
        error = compiled.error();
      else if (expected.empty())
        expected = report::WriteTextReport(compiled->result.report, nullptr, {});
    });
    if (error) return fail(*error);
  }
  engine::SessionOptions cached = options;
  cached.flags.executable_cache_path = dir;
  uint64_t file_size = 0;
  for (int run = 0; run < runs; ++run) {
    std::filesystem::remove_all(dir);
    std::optional<Error> error;
    time(miss, [&] {
      auto compiled = engine::LoadOrCompile(model, cached, log);
      if (!compiled)
        error = compiled.error();
      else if (compiled->cache.outcome != engine::CacheOutcome::kMiss)
        error = Error("expected a miss");
      else
        file_size = std::filesystem::file_size(compiled->cache.path);
    });
    if (error) return fail(*error);
  }
  for (const auto& pass : {std::pair{engine::exec::LoadParts::kReport, &hit_report},
                           std::pair{engine::exec::LoadParts::kAll, &hit_full}}) {
    // Not a structured binding: older clang cannot capture those in lambdas.
    const engine::exec::LoadParts parts = pass.first;
    Times* times = pass.second;
    for (int run = 0; run < runs; ++run) {
      std::optional<Error> error;
      time(*times, [&] {
        auto loaded = engine::LoadOrCompile(model, cached, log, parts);
        if (!loaded)
          error = loaded.error();
        else if (loaded->cache.outcome != engine::CacheOutcome::kHit)
          error = Error("expected a hit");
        else if (report::WriteTextReport(loaded->result.report, nullptr, {}) != expected)
          error = Error("the loaded report differs from the compiled one");
      });
      if (error) return fail(*error);
    }
  }
  std::filesystem::remove_all(dir);

  PrintTimes(model, runs, file_size, compile, miss, hit_report, hit_full);
  return 0;
}
