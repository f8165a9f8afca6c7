// The tile simulator's speed on a dot-heavy module (a 256 x 256 x 256 f32
// matmul compiled for a full ipu2, 1,472 tiles), next to a plain optimised
// C++ loop doing the same multiply-adds in the same process.
//
//   build/bench/sim/sim_bench --benchmark_counters_tabular=true
//
// Counters: FLOP/s is 2 M N K per host second (the simulator's simulated
// FLOP/s, or the reference loop's real ones); us_per_step is host time per
// program step the simulator ran (compute sets, copies, stream copies).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/compiler/compiler.h"
#include "engine/hlo/parser.h"
#include "engine/sim/simulator.h"

namespace {

using namespace tileprof;
using namespace tileprof::engine;

constexpr int kM = 256, kK = 256, kN = 256;

std::string Module() {
  return "HloModule dot\nENTRY main {\n"
         "  x = f32[" +
         std::to_string(kM) + "," + std::to_string(kK) +
         "] parameter(0)\n"
         "  w = f32[" +
         std::to_string(kK) + "," + std::to_string(kN) +
         "] parameter(1)\n"
         "  ROOT d = f32[" +
         std::to_string(kM) + "," + std::to_string(kN) +
         "] dot(x, w), "
         "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<std::byte> Bytes(const std::vector<float>& v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct Prepared {
  hlo::Module module;
  compiler::CompileResult result;
};

Prepared& Compiled() {
  static Prepared* prepared = [] {
    auto module = hlo::ParseModule(Module(), {.source_name = "dot.hlo"});
    auto target = Target::FromPreset("ipu2");
    auto result = compiler::CompileModule(*module, *target, {});
    if (!result) std::abort();
    return new Prepared{std::move(*module), std::move(*result)};
  }();
  return *prepared;
}

void BM_SimulatedDot(benchmark::State& state) {
  Prepared& prepared = Compiled();
  auto simulator =
      sim::Simulator::Create(prepared.result, {.threads = static_cast<uint32_t>(state.range(0))});
  if (!simulator) {
    state.SkipWithError(simulator.error().message().c_str());
    return;
  }
  sim::HostData inputs{{"x", Bytes(Random(kM * kK, 1))},
                       {"w", Bytes(Random(kK * kN, 2))},
                       {"seed", std::vector<std::byte>(8)}};
  // One untimed run gives the steps per run (and warms the caches).
  if (!(*simulator)->Run(inputs)) {
    state.SkipWithError("run failed");
    return;
  }
  const size_t steps = (*simulator)->Report().steps.size();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    auto run = (*simulator)->Run(inputs);
    if (!run) {
      state.SkipWithError(run.error().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(run->outputs);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double flops = 2.0 * kM * kN * kK;
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["us_per_step"] =
      seconds * 1e6 / static_cast<double>(steps) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SimulatedDot)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The reference: i-k-j loop order, so the inner loop streams rows of w and
// out and the compiler vectorises it.
void BM_ReferenceMatmul(benchmark::State& state) {
  const std::vector<float> x = Random(kM * kK, 1), w = Random(kK * kN, 2);
  std::vector<float> out(kM * kN);
  for (auto _ : state) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (int i = 0; i < kM; ++i) {
      for (int k = 0; k < kK; ++k) {
        const float a = x[i * kK + k];
        const float* row = &w[k * kN];
        float* o = &out[i * kN];
        for (int j = 0; j < kN; ++j) o[j] += a * row[j];
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * kM * kN * kK, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReferenceMatmul)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
