// `tileprof run MODEL.hlo`: compile onto the tiles of a target, execute on
// the tile simulator --iterations times, print the scalar results of every
// execution, write the results as .npy files and the text report with its
// Execution section.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/session_flags.h"
#include "common/file.h"
#include "common/format.h"
#include "common/npy.h"
#include "engine/session/event_sink.h"
#include "engine/session/host_io.h"
#include "engine/session/precompile.h"
#include "engine/session/report_output.h"
#include "engine/session/session.h"
#include "engine/sim/simulator.h"
#include "reports/text_writer.h"

namespace tileprof::cli {
namespace {

struct Options {
  SessionFlags session;
  uint64_t iterations = 1;
  std::string inputs = "zeros";
  uint64_t seed = 0;
  std::vector<std::string> input_files;  // NAME_OR_INDEX=FILE.npy
  std::string outputs_dir;
  uint32_t threads = 0;
  bool show_execution_steps = false;
};

constexpr std::string_view kCommand = "run";

int Fail(std::string_view message, int status = kExitError) {
  PrintDiagnostic(kCommand, message);
  return status;
}

// The inputs of the first execution, by stream name.
Expected<engine::sim::HostData> BuildInputs(const Options& options,
                                            const engine::HostInterface& host,
                                            const engine::Graph& graph) {
  std::vector<std::optional<std::vector<std::byte>>> given(host.inputs.size());
  for (const std::string& spec : options.input_files) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return MakeError("--input '{}': expected NAME_OR_INDEX=FILE.npy", spec);
    }
    const std::string name = spec.substr(0, eq);
    const std::string file = spec.substr(eq + 1);
    Expected<size_t> index = engine::FindInput(host, name);
    if (!index) return index.error().Within(fmt::format("--input {}", spec));
    if (given[*index]) return MakeError("--input: '{}' is given twice", host.inputs[*index].stream);
    TILEPROF_ASSIGN_OR_RETURN(npy::Array array, npy::ReadFile(file));
    TILEPROF_ASSIGN_OR_RETURN(std::vector<std::byte> bytes,
                              engine::InputFromNpy(host.inputs[*index], array, file));
    given[*index] = std::move(bytes);
  }
  engine::sim::HostData data;
  for (size_t i = 0; i < host.inputs.size(); ++i) {
    const engine::HostLeaf& leaf = host.inputs[i];
    if (leaf.elements == 0) continue;  // no stream
    if (given[i])
      data[leaf.stream] = std::move(*given[i]);
    else if (options.inputs == "random")
      data[leaf.stream] = engine::RandomInput(leaf, options.seed);
    else
      data[leaf.stream] = engine::ZeroInput(leaf);
  }
  // The compiler's seed stream (poprand's seed for every tile), when it made
  // one: --seed.
  for (engine::StreamId id = 0; id < graph.num_streams(); ++id) {
    const engine::StreamInfo& stream = graph.stream(id);
    if (stream.name != "seed" || stream.direction != engine::StreamDirection::kHostToDevice ||
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

Status WriteOutputs(const std::string& dir, const engine::HostInterface& host,
                    const engine::sim::HostData& outputs) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return MakeError("--outputs '{}': {}", dir, error.message());
  for (const engine::HostLeaf& leaf : host.outputs) {
    std::span<const std::byte> bytes;
    if (auto it = outputs.find(leaf.stream); it != outputs.end()) bytes = it->second;
    TILEPROF_ASSIGN_OR_RETURN(npy::Array array, engine::OutputToNpy(leaf, bytes));
    const std::string path = (std::filesystem::path(dir) / (leaf.stream + ".npy")).string();
    TILEPROF_RETURN_IF_ERROR(npy::WriteFile(path, array));
  }
  return {};
}

// The tensors of one direction of host exchange, for the data-transfer
// events (spec: trace-events.md, HOST_TO_DEVICE_TRANSFER).
std::vector<report::TransferredTensor> Transfers(const std::vector<engine::HostLeaf>& leaves) {
  std::vector<report::TransferredTensor> tensors;
  for (const engine::HostLeaf& leaf : leaves)
    if (leaf.elements > 0) tensors.push_back({leaf.stream, leaf.Bytes()});
  return tensors;
}

int Run(const Options& options) {
  Session prepared;
  if (auto stop = PrepareSession(options.session, kCommand, prepared)) return *stop;
  engine::SessionOptions& session = prepared.options;
  engine::ReportSettings& settings = prepared.settings;
  settings.text_execution_steps = options.show_execution_steps;
  const bool precompile = prepared.precompile;
  engine::CompileLog log(stderr, prepared.env.log_level);
  auto events = engine::EventSink::Open(settings, {.path = settings.config.files.events}, &log);
  if (!events) return Fail(events.error().message());
  session.events = &*events;
  // Pre-compile mode attaches no device: the program is compiled and saved,
  // and every result is zeros (spec/executable-cache.md section 6).
  if (!precompile) log.Info("poplar_platform.cc", "Device /device:IPU:0 attached to IPU: 0");
  const std::string& model = options.session.model;
  auto compiled =
      precompile ? engine::PrecompileHloFile(model, session, log, engine::exec::LoadParts::kAll)
                 : engine::LoadOrCompile(model, session, log, engine::exec::LoadParts::kRunnable);
  if (!compiled) return CompileFailure(kCommand, model, compiled.error().message());
  const bool from_cache = compiled->cache.outcome == engine::CacheOutcome::kHit;
  // The report files get both parts after the run; before it, only a graph
  // that will not run (out of memory, pre-compile) gets its compile report.
  engine::ReportSettings compile_settings = settings;
  if (!precompile && compiled->result.tiles_out_of_memory == 0) {
    engine::ReportFiles& files = compile_settings.config.files;
    files.text = files.json = files.cbor = files.sqlite = "";
  }
  auto compile_written = engine::WriteCompileOutputs(*compiled, compile_settings, *events, log);
  if (!compile_written) return Fail(compile_written.error().message());
  if (precompile) {
    // No device: every result is zeros, as the original's pre-compile mode.
    if (!options.outputs_dir.empty()) {
      Expected<engine::HostInterface> host = engine::DescribeHostInterface(compiled->module);
      if (!host) return Fail(host.error().message());
      engine::sim::HostData zeros;
      for (const engine::HostLeaf& leaf : host->outputs)
        zeros[leaf.stream] = engine::ZeroInput(leaf);
      if (Status written = WriteOutputs(options.outputs_dir, *host, zeros); !written)
        return Fail(written.error().message());
    }
    std::cout << engine::PrecompiledSavedMessage(compiled->cache.path) << "\n";
    if (Status closed = events->Close(); !closed) return Fail(closed.error().message());
    return kExitOk;
  }
  if (compiled->result.tiles_out_of_memory > 0) {
    // As Poplar: an out-of-memory graph gets its memory report but does not run.
    if (Status closed = events->Close(); !closed) return Fail(closed.error().message());
    return Fail(engine::OutOfMemoryMessage(compile_written->profile));
  }
  Expected<engine::HostInterface> host = engine::DescribeHostInterface(compiled->module);
  if (!host) return Fail(host.error().message());
  Expected<engine::sim::HostData> inputs = BuildInputs(options, *host, *compiled->result.graph);
  if (!inputs) return Fail(inputs.error().message());
  auto simulator = engine::sim::Simulator::Create(
      compiled->result, {.threads = options.threads, .module = &compiled->module});
  if (!simulator) return Fail(simulator.error().message());

  const std::string module_name(compiled->module.name());
  if (Status loaded = events->LoadEngine(module_name); !loaded)
    return Fail(loaded.error().message());
  const auto start = std::chrono::steady_clock::now();
  engine::sim::HostData outputs;
  for (uint64_t execution = 1; execution <= options.iterations; ++execution) {
    if (Status sent = events->HostToDevice(Transfers(host->inputs)); !sent)
      return Fail(sent.error().message());
    Expected<engine::sim::RunResult> run = (*simulator)->Run(*inputs);
    if (!run) return Fail(fmt::format("execution {}: {}", execution, run.error().message()));
    if (Status sent = events->DeviceToHost(Transfers(host->outputs)); !sent)
      return Fail(sent.error().message());
    if (events->WantsExecutionReport(module_name, from_cache)) {
      report::ExecutionReport so_far = (*simulator)->Report();
      if (Status executed = events->Execute(module_name, &so_far, from_cache); !executed)
        return Fail(executed.error().message());
    } else if (Status executed = events->Execute(module_name, nullptr, from_cache); !executed) {
      return Fail(executed.error().message());
    }
    for (const engine::HostLeaf& leaf : host->outputs) {
      auto it = run->outputs.find(leaf.stream);
      if (leaf.elements != 1 || it == run->outputs.end()) continue;
      std::cout << fmt::format("execution {}: {} ({}) = {}\n", execution, leaf.stream, leaf.label,
                               engine::FormatElement(leaf.type, it->second.data()));
    }
    // input_output_alias: the next execution starts from this one's results.
    for (const auto& [output, input] : host->aliases) {
      auto it = run->outputs.find(host->outputs[output].stream);
      if (it != run->outputs.end()) (*inputs)[host->inputs[input].stream] = it->second;
    }
    outputs = std::move(run->outputs);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  report::ExecutionReport execution = (*simulator)->Report();
  auto run_written = engine::WriteRunOutputs(*compiled, execution, settings);
  if (!run_written) return Fail(run_written.error().message());
  if (Status closed = events->Close(); !closed) return Fail(closed.error().message());
  if (!options.outputs_dir.empty()) {
    if (Status written = WriteOutputs(options.outputs_dir, *host, outputs); !written) {
      return Fail(written.error().message());
    }
  }
  const double microseconds =
      static_cast<double>(execution.total_cycles) / compiled->target.ClockHz() * 1e6;
  std::cout << fmt::format("Ran {} on {}: {} execution(s) in {:.2f} s on {} host thread(s)\n",
                           compiled->module.name(), compiled->target.Describe(), options.iterations,
                           seconds, (*simulator)->threads());
  std::cout << fmt::format("  Cycles:   {} (approx {} microseconds at {} MHz)\n",
                           WithThousands(execution.total_cycles), WithThousands(microseconds, 1),
                           WithThousands(compiled->target.ClockHz() / 1e6, 1));
  if (!options.outputs_dir.empty())
    std::cout << fmt::format("  Outputs:  {}\n", options.outputs_dir);
  for (const std::string& file : compile_written->files)
    std::cout << fmt::format("  Wrote:    {}\n", file);
  for (const std::string& file : run_written->files)
    std::cout << fmt::format("  Wrote:    {}\n", file);
  for (const std::string& note : compile_written->notes)
    std::cout << "  Note:     " << note << '\n';
  return ExitWithoutTeardown(kExitOk);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Compiles the module (as `tileprof compile`), runs it on the tile simulator --iterations\n"
      "times with real numerics and a cycle model (docs/cycle-model.md), and writes the text\n"
      "report with its Execution section. Each parameter is fed from --input NAME=FILE.npy\n"
      "(NAME: parameter name, tuple leaf 'name.i', or parameter number) or else --inputs\n"
      "zeros|random (random: floats in [-1,1), integers in [0,10), seeded by --seed). Shape\n"
      "and dtype must match exactly; bf16 parameters take float32 arrays. The module's\n"
      "input_output_alias carries results into the next execution's parameters (a training\n"
      "step's weights). Scalar results are printed after every execution; --outputs DIR gets\n"
      "out.<i>.npy per result leaf of the last execution (bf16 results as float32).\n"
      "A module with an op the simulator cannot execute is refused before it runs, naming\n"
      "the instruction. Environment: as `tileprof compile`; POPLAR_LOG_LEVEL=INFO logs the\n"
      "device line, TF_POPLAR_VLOG_LEVEL=1 the Begin/End XLA compilation lines.");
  AddSessionFlags(cmd, options->session);
  cmd.add_option("--iterations", options->iterations, "Executions of the program")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--inputs", options->inputs, "Parameters without --input: zeros or random")
      ->check(CLI::IsMember({"zeros", "random"}))
      ->capture_default_str();
  cmd.add_option("--seed", options->seed, "Seed of --inputs random and of the device's seed stream")
      ->capture_default_str();
  // One value per --input, so `--input a=x.npy MODEL` leaves MODEL alone.
  cmd.add_option("--input", options->input_files,
                 "NAME_OR_INDEX=FILE.npy for one parameter (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--outputs", options->outputs_dir, "Directory for out.<i>.npy result files");
  cmd.add_option("--threads", options->threads, "Host threads (default: all cores)");
  cmd.add_flag("--show-execution-steps", options->show_execution_steps,
               "List every executed step with its cycles in the report");
  return [options] { return Run(*options); };
}

const Registration kRun{
    "run", "Compile an HLO module, execute it on the tile simulator and write the report", Setup};

}  // namespace
}  // namespace tileprof::cli
