// Helpers for the simulator tests: compile HLO text for a small target, run
// it with typed inputs, read typed outputs.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/compiler/compiler.h"
#include "engine/hlo/parser.h"
#include "engine/sim/simulator.h"

namespace tileprof::engine::sim_test {

struct Compiled {
  hlo::Module module;
  compiler::CompileResult result;
};

// Small targets keep the seed compute set (one vertex per tile) cheap.
inline Compiled CompileText(std::string text, std::string_view preset = "ipu2", uint32_t tiles = 8,
                            uint32_t ipus = 1) {
  Expected<hlo::Module> module = hlo::ParseModule(std::move(text), {.source_name = "test.hlo"});
  if (!module) {
    ADD_FAILURE() << module.error().message();
    std::abort();
  }
  Expected<Target> target = Target::FromPreset(preset, ipus, tiles);
  if (!target) std::abort();
  Expected<compiler::CompileResult> result = compiler::CompileModule(*module, *target, {});
  if (!result) {
    ADD_FAILURE() << result.error().message();
    std::abort();
  }
  return Compiled{std::move(*module), std::move(*result)};
}

template <typename T>
std::vector<std::byte> Encode(std::span<const T> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}
template <typename T>
std::vector<std::byte> Encode(std::initializer_list<T> values) {
  return Encode(std::span<const T>(values.begin(), values.size()));
}

template <typename T>
std::vector<T> Decode(const std::vector<std::byte>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// The simulator of `compiled`, given the module so that its errors name the
// instructions; for tests of what it refuses.
inline Expected<std::unique_ptr<sim::Simulator>> TryCreate(const Compiled& compiled,
                                                           uint32_t threads = 1) {
  return sim::Simulator::Create(compiled.result, {.threads = threads, .module = &compiled.module});
}

inline std::unique_ptr<sim::Simulator> MustCreate(const Compiled& compiled, uint32_t threads = 1) {
  auto simulator = TryCreate(compiled, threads);
  if (!simulator) {
    ADD_FAILURE() << simulator.error().message();
    std::abort();
  }
  return std::move(*simulator);
}

// Runs once with `inputs` plus the seed stream; fails the test on error.
inline sim::HostData MustRun(sim::Simulator& simulator, sim::HostData inputs) {
  inputs["seed"] = Encode<uint32_t>({1, 2});
  Expected<sim::RunResult> run = simulator.Run(inputs);
  if (!run) {
    ADD_FAILURE() << run.error().message();
    return {};
  }
  return std::move(run->outputs);
}

}  // namespace tileprof::engine::sim_test
