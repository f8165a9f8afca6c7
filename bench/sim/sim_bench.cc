// The tile simulator's speed on matmul and convolution modules compiled for
// a full ipu2 (1,472 tiles), next to OpenBLAS's sgemm on the same
// multiply-adds in the same run (on one and two OpenBLAS threads; a
// convolution as the matmul of its im2col form).
//
//   build/bench/sim/sim_bench --benchmark_counters_tabular=true
//
// Counters: FLOP/s is 2 M N K per host second (the simulator's simulated
// FLOP/s, or sgemm's real ones); us_per_step is host time per program step
// the simulator ran (compute sets, copies, stream copies).
#include <benchmark/benchmark.h>
#include <cblas.h>

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

struct Case {
  const char* name;
  std::string hlo;
  std::vector<std::pair<std::string, size_t>> inputs;  // name, f32 elements
  int m, n, k;                                         // the sgemm of the same work
};

// 0: dot 256x256x256. 1: the second convolution of samples/cnn (batch 32,
// 13x13x32 -> 11x11x64, 3x3): M = 32*11*11, K = 3*3*32, N = 64.
// 2: a 1x1 convolution of ResNet-50's conv4 (batch 16, 14x14, 1024 -> 256).
const Case& GetCase(int index) {
  static const Case cases[] = {
      {"dot_256",
       "HloModule dot\nENTRY main {\n"
       "  x = f32[256,256] parameter(0)\n  w = f32[256,256] parameter(1)\n"
       "  ROOT d = f32[256,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
       {{"x", 256 * 256}, {"w", 256 * 256}},
       256,
       256,
       256},
      {"conv_cnn",
       "HloModule conv\nENTRY main {\n"
       "  x = f32[32,13,13,32] parameter(0)\n  w = f32[3,3,32,64] parameter(1)\n"
       "  ROOT c = f32[32,11,11,64] convolution(x, w), window={size=3x3}, "
       "dim_labels=b01f_01io->b01f\n}\n",
       {{"x", 32 * 13 * 13 * 32}, {"w", 3 * 3 * 32 * 64}},
       32 * 11 * 11,
       64,
       3 * 3 * 32},
      {"conv_1x1",
       "HloModule conv1x1\nENTRY main {\n"
       "  x = f32[16,14,14,1024] parameter(0)\n  w = f32[1,1,1024,256] parameter(1)\n"
       "  ROOT c = f32[16,14,14,256] convolution(x, w), window={size=1x1}, "
       "dim_labels=b01f_01io->b01f\n}\n",
       {{"x", 16 * 14 * 14 * 1024}, {"w", 1024 * 256}},
       16 * 14 * 14,
       256,
       1024},
  };
  return cases[index];
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

const Prepared* Compiled(int index) {
  static Prepared* prepared[3] = {};
  if (prepared[index] == nullptr) {
    auto module = hlo::ParseModule(GetCase(index).hlo, {.source_name = "bench.hlo"});
    auto target = Target::FromPreset("ipu2");
    if (!module || !target) return nullptr;
    auto result = compiler::CompileModule(*module, *target, {});
    if (!result) return nullptr;
    prepared[index] = new Prepared{std::move(*module), std::move(*result)};
  }
  return prepared[index];
}

double Flops(const Case& c) { return 2.0 * c.m * c.n * c.k; }

// Arguments: case, host threads.
void BM_Simulated(benchmark::State& state) {
  const Case& c = GetCase(static_cast<int>(state.range(0)));
  state.SetLabel(c.name);
  const Prepared* prepared = Compiled(static_cast<int>(state.range(0)));
  if (prepared == nullptr) {
    state.SkipWithError("compile failed");
    return;
  }
  auto simulator =
      sim::Simulator::Create(prepared->result, {.threads = static_cast<uint32_t>(state.range(1))});
  if (!simulator) {
    state.SkipWithError(simulator.error().message().c_str());
    return;
  }
  sim::HostData inputs{{"seed", std::vector<std::byte>(8)}};
  uint32_t seed = 1;
  for (const auto& [name, elements] : c.inputs) inputs[name] = Bytes(Random(elements, seed++));
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
  state.counters["FLOP/s"] =
      benchmark::Counter(Flops(c), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["us_per_step"] =
      seconds * 1e6 / static_cast<double>(steps) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Simulated)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The peer: OpenBLAS sgemm, row-major, on the case's M x K . K x N.
// Arguments: case, OpenBLAS threads (the simulator's are compared with
// the same number).
void BM_OpenBlasSgemm(benchmark::State& state) {
  const Case& c = GetCase(static_cast<int>(state.range(0)));
  state.SetLabel(c.name);
  openblas_set_num_threads(static_cast<int>(state.range(1)));
  const std::vector<float> a = Random(static_cast<size_t>(c.m) * c.k, 1),
                           b = Random(static_cast<size_t>(c.k) * c.n, 2);
  std::vector<float> out(static_cast<size_t>(c.m) * c.n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c.m, c.n, c.k, 1.0f, a.data(), c.k,
                b.data(), c.n, 0.0f, out.data(), c.n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(Flops(c), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_OpenBlasSgemm)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
