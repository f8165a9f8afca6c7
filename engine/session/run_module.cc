#include "engine/session/run_module.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "common/npy.h"
#include "engine/session/host_io.h"
#include "engine/session/precompile.h"

namespace tileprof::engine {
namespace {

// The inputs of the first execution, by stream name.
Expected<sim::HostData> BuildInputs(const RunOptions& options, const HostInterface& host,
                                    const Graph& graph) {
  std::vector<std::optional<std::vector<std::byte>>> given(host.inputs.size());
  for (const std::string& spec : options.input_files) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return MakeError("--input '{}': expected NAME_OR_INDEX=FILE.npy", spec);
    }
    const std::string name = spec.substr(0, eq);
    const std::string file = spec.substr(eq + 1);
    Expected<size_t> index = FindInput(host, name);
    if (!index) return index.error().Within(fmt::format("--input {}", spec));
    if (given[*index]) return MakeError("--input: '{}' is given twice", host.inputs[*index].stream);
    TILEPROF_ASSIGN_OR_RETURN(npy::Array array, npy::ReadFile(file));
    TILEPROF_ASSIGN_OR_RETURN(std::vector<std::byte> bytes,
                              InputFromNpy(host.inputs[*index], array, file));
    given[*index] = std::move(bytes);
  }
  sim::HostData data;
  for (size_t i = 0; i < host.inputs.size(); ++i) {
    const HostLeaf& leaf = host.inputs[i];
    if (leaf.elements == 0) continue;  // no stream
    if (given[i])
      data[leaf.stream] = std::move(*given[i]);
    else if (options.random_inputs)
      data[leaf.stream] = RandomInput(leaf, options.seed);
    else
      data[leaf.stream] = ZeroInput(leaf);
  }
  // The compiler's seed stream (poprand's seed for every tile), when it made
  // one: the seed option.
  for (StreamId id = 0; id < graph.num_streams(); ++id) {
    const StreamInfo& stream = graph.stream(id);
    if (stream.name != "seed" || stream.direction != StreamDirection::kHostToDevice ||
        data.contains(stream.name)) {
      continue;
    }
    std::vector<std::byte> seed(8);
    for (size_t i = 0; i < 8; ++i)
      seed[i] = std::byte(static_cast<uint8_t>(options.seed >> (8 * i)));
    data["seed"] = std::move(seed);
  }
  return data;
}

Status WriteOutputs(const std::string& dir, const HostInterface& host,
                    const sim::HostData& outputs) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return MakeError("--outputs '{}': {}", dir, error.message());
  for (const HostLeaf& leaf : host.outputs) {
    std::span<const std::byte> bytes;
    if (auto it = outputs.find(leaf.stream); it != outputs.end()) bytes = it->second;
    TILEPROF_ASSIGN_OR_RETURN(npy::Array array, OutputToNpy(leaf, bytes));
    const std::string path = (std::filesystem::path(dir) / (leaf.stream + ".npy")).string();
    TILEPROF_RETURN_IF_ERROR(npy::WriteFile(path, array));
  }
  return {};
}

// The tensors of one direction of host exchange, for the data-transfer
// events (spec: trace-events.md, HOST_TO_DEVICE_TRANSFER).
std::vector<report::TransferredTensor> Transfers(const std::vector<HostLeaf>& leaves) {
  std::vector<report::TransferredTensor> tensors;
  for (const HostLeaf& leaf : leaves)
    if (leaf.elements > 0) tensors.push_back({leaf.stream, leaf.Bytes()});
  return tensors;
}

// Pre-compile mode has no device: every result is zeros, as the original's.
Status WritePrecompiledOutputs(const CompiledModule& compiled, const RunOptions& options) {
  if (options.outputs_dir.empty()) return {};
  TILEPROF_ASSIGN_OR_RETURN(HostInterface host, DescribeHostInterface(compiled.module));
  sim::HostData zeros;
  for (const HostLeaf& leaf : host.outputs) zeros[leaf.stream] = ZeroInput(leaf);
  return WriteOutputs(options.outputs_dir, host, zeros);
}

// The executions of a graph that fits, its engine loaded: each sends its
// inputs, runs, reads its outputs back, emits EXECUTE (with the report so
// far when the sink asks for one), reports its scalars, and hands aliased
// results to the next. Returns the last execution's outputs.
Expected<sim::HostData> Execute(const CompiledModule& compiled, const RunOptions& options,
                                const HostInterface& host, sim::HostData inputs,
                                sim::Simulator& simulator, EventSink& events,
                                const RunCallbacks& callbacks) {
  const bool from_cache = compiled.cache.outcome == CacheOutcome::kHit;
  const std::string module_name(compiled.module.name());
  sim::HostData outputs;
  std::vector<ScalarResult> scalars;
  for (uint64_t execution = 1; execution <= options.iterations; ++execution) {
    TILEPROF_RETURN_IF_ERROR(events.HostToDevice(Transfers(host.inputs)));
    Expected<sim::RunResult> run = simulator.Run(inputs);
    if (!run) return run.error().Within(fmt::format("execution {}", execution));
    TILEPROF_RETURN_IF_ERROR(events.DeviceToHost(Transfers(host.outputs)));
    if (events.WantsExecutionReport(module_name, from_cache)) {
      report::ExecutionReport so_far = simulator.Report();
      TILEPROF_RETURN_IF_ERROR(events.Execute(module_name, &so_far, from_cache));
    } else {
      TILEPROF_RETURN_IF_ERROR(events.Execute(module_name, nullptr, from_cache));
    }
    scalars.clear();
    for (const HostLeaf& leaf : host.outputs) {
      auto it = run->outputs.find(leaf.stream);
      if (leaf.elements != 1 || it == run->outputs.end()) continue;
      scalars.push_back({leaf.stream, leaf.label, FormatElement(leaf.type, it->second.data())});
    }
    if (callbacks.executed) callbacks.executed(execution, scalars);
    // input_output_alias: the next execution starts from this one's results.
    for (const auto& [output, input] : host.aliases) {
      auto it = run->outputs.find(host.outputs[output].stream);
      if (it != run->outputs.end()) inputs[host.inputs[input].stream] = it->second;
    }
    outputs = std::move(run->outputs);
  }
  return outputs;
}

// The simulator of `compiled`, its elided constants filled as `options`
// asks (a warning logged for each).
Expected<std::unique_ptr<sim::Simulator>> CreateSimulator(const CompiledModule& compiled,
                                                          const RunOptions& options,
                                                          const ReportSettings& settings,
                                                          CompileLog& log) {
  const ElidedFill fill =
      FillElidedConstants(compiled.result, options.elided_constants, options.seed);
  for (const std::string& warning : fill.warnings) log.Warning("run_module.cc", warning);
  // Planning every compute set's gathers, exchanges and cycles is a run's
  // fixed cost, which a cache hit does not save: its own phase in the log.
  PhaseScope phase(log, "Preparing simulator");
  auto simulator = sim::Simulator::Create(
      compiled.result, {.threads = options.threads,
                        .tile_cycles = settings.config.profile_execution == ExecutionProfile::kTile,
                        .ipu_model = options.ipu_model,
                        .module = &compiled.module,
                        .filled_constants = &fill.values});
  if (simulator || options.elided_constants != ElidedConstants::kError ||
      compiled.result.elided_constants.empty())
    return simulator;
  // Made-up values may be good enough (a benchmark, a shape check); say how.
  return Error(simulator.error().message() +
               "\n  (constants printed as {...} in the HLO text: --elided-constants=zeros or "
               "random fills them with made-up values)");
}

}  // namespace

Expected<CompiledModule> CompileForRun(const std::string& model, const SessionOptions& options,
                                       bool precompile, CompileLog& log) {
  // Pre-compile mode attaches no device: the program is compiled and saved
  // (spec/executable-cache.md section 6).
  if (precompile) return PrecompileHloFile(model, options, log, exec::LoadParts::kAll);
  log.Info("poplar_platform.cc", "Device /device:IPU:0 attached to IPU: 0");
  return LoadOrCompile(model, options, log, exec::LoadParts::kRunnable);
}

Expected<RunOutcome> RunCompiled(const CompiledModule& compiled, const RunOptions& options,
                                 const ReportSettings& settings, bool precompile, EventSink& events,
                                 CompileLog& log, const RunCallbacks& callbacks) {
  // The report files get both parts after the run; before it, only a graph
  // that will not run (out of memory, pre-compile) gets its compile report.
  ReportSettings compile_settings = settings;
  if (!precompile && compiled.result.tiles_out_of_memory == 0) {
    ReportFiles& files = compile_settings.config.files;
    files.text = files.json = files.cbor = files.sqlite = "";
  }
  TILEPROF_ASSIGN_OR_RETURN(WrittenReports compile_written,
                            WriteCompileOutputs(compiled, compile_settings, events, log));
  RunOutcome outcome;
  outcome.files = compile_written.files;
  outcome.notes = compile_written.notes;
  if (precompile) {
    TILEPROF_RETURN_IF_ERROR(WritePrecompiledOutputs(compiled, options));
    if (callbacks.precompiled) callbacks.precompiled();
    TILEPROF_RETURN_IF_ERROR(events.Close());
    return outcome;
  }
  if (compiled.result.tiles_out_of_memory > 0) {
    // As Poplar: an out-of-memory graph gets its memory report but does not run.
    TILEPROF_RETURN_IF_ERROR(events.Close());
    return Error(OutOfMemoryMessage(compile_written.profile));
  }
  TILEPROF_ASSIGN_OR_RETURN(HostInterface host, DescribeHostInterface(compiled.module));
  TILEPROF_ASSIGN_OR_RETURN(sim::HostData inputs,
                            BuildInputs(options, host, *compiled.result.graph));
  TILEPROF_ASSIGN_OR_RETURN(outcome.simulator, CreateSimulator(compiled, options, settings, log));

  TILEPROF_RETURN_IF_ERROR(events.LoadEngine(compiled.module.name()));
  const auto start = std::chrono::steady_clock::now();
  TILEPROF_ASSIGN_OR_RETURN(
      sim::HostData outputs,
      Execute(compiled, options, host, std::move(inputs), *outcome.simulator, events, callbacks));
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  report::ExecutionReport execution = outcome.simulator->Report();
  TILEPROF_ASSIGN_OR_RETURN(WrittenReports run_written,
                            WriteRunOutputs(compiled, execution, settings));
  TILEPROF_RETURN_IF_ERROR(events.Close());
  if (!options.outputs_dir.empty())
    TILEPROF_RETURN_IF_ERROR(WriteOutputs(options.outputs_dir, host, outputs));
  outcome.files.insert(outcome.files.end(), run_written.files.begin(), run_written.files.end());
  outcome.ran = true;
  outcome.total_cycles = execution.total_cycles;
  outcome.threads = outcome.simulator->threads();
  return outcome;
}

}  // namespace tileprof::engine
