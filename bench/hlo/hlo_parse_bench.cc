// Google Benchmark of hlo::ParseModules on the files named on the command
// line (compare.sh passes the 2 MB corpus dump and a generated 100 MB module):
// bytes_per_second is the parse throughput the HLO issue sets at >= 200 MB/s.
// The copy of the text into the parser is outside the timed region, as a
// reader that maps the file would not pay it.
//
//   hlo_parse_bench [benchmark flags] FILE...
#include <cstdio>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "common/file.h"
#include "engine/hlo/parser.h"

namespace {

void ParseFile(benchmark::State& state, const std::string& text, bool validate) {
  for (auto _ : state) {
    state.PauseTiming();
    std::string copy = text;
    state.ResumeTiming();
    auto modules = tileprof::hlo::ParseModules(std::move(copy), {.validate_attributes = validate});
    if (!modules) {
      state.SkipWithError(modules.error().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(modules->size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::string> texts;
  texts.reserve(static_cast<size_t>(argc));
  for (int i = 1; i < argc; ++i) {
    auto text = tileprof::ReadFile(argv[i]);
    if (!text) {
      std::fprintf(stderr, "hlo_parse_bench: %s\n", text.error().message().c_str());
      return 2;
    }
    texts.push_back(std::move(*text));
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    const std::string& body = texts.back();
    benchmark::RegisterBenchmark(("Parse/" + name).c_str(), [&body](benchmark::State& s) {
      ParseFile(s, body, true);
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("ParseSyntaxOnly/" + name).c_str(), [&body](benchmark::State& s) {
      ParseFile(s, body, false);
    })->Unit(benchmark::kMillisecond);
  }
  if (texts.empty()) {
    std::fprintf(stderr, "usage: hlo_parse_bench [benchmark flags] FILE...\n");
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
