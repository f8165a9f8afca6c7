// `tileprof run MODEL.hlo`: compile onto the tiles of a target, execute on
// the tile simulator --iterations times, print the scalar results of every
// execution, write the results as .npy files and the text report with its
// Execution section.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "common/file.h"
#include "common/format.h"
#include "common/npy.h"
#include "engine/session/host_io.h"
#include "engine/session/session.h"
#include "engine/sim/simulator.h"
#include "reports/text_writer.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string model;
  std::string output = "Trace_Event_Report.rep";
  std::string target = "ipu2";
  uint32_t ipus = 1;
  uint32_t tiles_per_ipu = 0;  // 0: the preset's
  uint64_t iterations = 1;
  std::string inputs = "zeros";
  uint64_t seed = 0;
  std::vector<std::string> input_files;  // NAME_OR_INDEX=FILE.npy
  std::string outputs_dir;
  uint32_t threads = 0;
  bool show_execution_steps = false;
  std::string progress;
};

constexpr std::string_view kCommand = "run";

int Fail(std::string_view message, int status = kExitError) {
  PrintDiagnostic(kCommand, message);
  return status;
}

// The inputs of the first execution, by stream name.
Expected<engine::sim::HostData> BuildInputs(const Options& options, const engine::HostInterface& host,
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
    if (given[i]) data[leaf.stream] = std::move(*given[i]);
    else if (options.inputs == "random") data[leaf.stream] = engine::RandomInput(leaf, options.seed);
    else data[leaf.stream] = engine::ZeroInput(leaf);
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
    for (size_t i = 0; i < 8; ++i) seed[i] = std::byte(static_cast<uint8_t>(options.seed >> (8 * i)));
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

int Run(const Options& options) {
  auto env = engine::ReadEnvironment();
  if (!env) return Fail(env.error().message(), kExitUsage);
  if (env->flags.help) {
    std::cout << engine::PoplarFlagsUsage();
    return kExitOk;
  }
  engine::SessionOptions session;
  session.target.preset = options.target;
  session.target.num_ipus = options.ipus;
  if (options.tiles_per_ipu > 0) session.target.tiles_per_ipu = options.tiles_per_ipu;
  session.flags = env->flags;
  session.engine = env->engine;
  std::string progress = options.progress.empty() ? env->flags.show_progress_bar : options.progress;
  if (!engine::ParseProgressMode(progress, &session.progress)) {
    return Fail("--progress: '" + progress + "' is not auto, true or false", kExitUsage);
  }
  engine::CompileLog log(stderr, env->log_level);
  log.Info("poplar_platform.cc", "Device /device:IPU:0 attached to IPU: 0");
  auto compiled = engine::CompileHloFile(options.model, session, log);
  if (!compiled) {
    const std::string& message = compiled.error().message();
    if (message.starts_with(options.model + ":")) {
      std::cerr << message << (message.ends_with('\n') ? "" : "\n");
      return kExitError;
    }
    return Fail(message);
  }
  if (compiled->result.tiles_out_of_memory > 0) {
    // As Poplar: an out-of-memory graph gets its memory report but does not run.
    std::string text = report::WriteTextReport(compiled->result.report, nullptr, {});
    if (Status written = WriteFileAtomic(options.output, text); !written) return Fail(written.error().message());
    return Fail(engine::OutOfMemoryMessage(options.output));
  }
  Expected<engine::HostInterface> host = engine::DescribeHostInterface(compiled->module);
  if (!host) return Fail(host.error().message());
  Expected<engine::sim::HostData> inputs = BuildInputs(options, *host, *compiled->result.graph);
  if (!inputs) return Fail(inputs.error().message());
  auto simulator = engine::sim::Simulator::Create(
      compiled->result, {.threads = options.threads, .module = &compiled->module});
  if (!simulator) return Fail(simulator.error().message());

  const auto start = std::chrono::steady_clock::now();
  engine::sim::HostData outputs;
  for (uint64_t execution = 1; execution <= options.iterations; ++execution) {
    Expected<engine::sim::RunResult> run = (*simulator)->Run(*inputs);
    if (!run) return Fail(fmt::format("execution {}: {}", execution, run.error().message()));
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
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  report::ExecutionReport execution = (*simulator)->Report();
  std::string text = report::WriteTextReport(compiled->result.report, &execution,
                                             {.show_execution_steps = options.show_execution_steps});
  if (Status written = WriteFileAtomic(options.output, text); !written) return Fail(written.error().message());
  if (!options.outputs_dir.empty()) {
    if (Status written = WriteOutputs(options.outputs_dir, *host, outputs); !written) {
      return Fail(written.error().message());
    }
  }
  const double microseconds = static_cast<double>(execution.total_cycles) / compiled->target.ClockHz() * 1e6;
  std::cout << fmt::format("Ran {} on {}: {} execution(s) in {:.2f} s on {} host thread(s)\n",
                           compiled->module.name(), compiled->target.Describe(), options.iterations, seconds,
                           (*simulator)->threads());
  std::cout << fmt::format("  Cycles:   {} (approx {} microseconds at {} MHz)\n",
                           WithThousands(execution.total_cycles), WithThousands(microseconds, 1),
                           WithThousands(compiled->target.ClockHz() / 1e6, 1));
  if (!options.outputs_dir.empty()) std::cout << fmt::format("  Outputs:  {}\n", options.outputs_dir);
  std::cout << fmt::format("  Report:   {}\n", options.output);
  return kExitOk;
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
  cmd.add_option("MODEL", options->model, "HLO text file (one module)")->required();
  cmd.add_option("-o,--output", options->output, "Where to write the text report")->capture_default_str();
  cmd.add_option("--target", options->target, "Target preset: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}))
      ->capture_default_str();
  cmd.add_option("--ipus", options->ipus, "Number of IPUs")->check(CLI::Range(1u, engine::kMaxIpus))->capture_default_str();
  cmd.add_option("--tiles-per-ipu", options->tiles_per_ipu,
                 "Tiles per IPU, fewer than the preset's (TF_POPLAR_FLAGS --ipu_model_tiles)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--iterations", options->iterations, "Executions of the program")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--inputs", options->inputs, "Parameters without --input: zeros or random")
      ->check(CLI::IsMember({"zeros", "random"}))
      ->capture_default_str();
  cmd.add_option("--seed", options->seed, "Seed of --inputs random and of the device's seed stream")
      ->capture_default_str();
  // One value per --input, so `--input a=x.npy MODEL` leaves MODEL alone.
  cmd.add_option("--input", options->input_files, "NAME_OR_INDEX=FILE.npy for one parameter (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--outputs", options->outputs_dir, "Directory for out.<i>.npy result files");
  cmd.add_option("--threads", options->threads, "Host threads (default: all cores)");
  cmd.add_flag("--show-execution-steps", options->show_execution_steps,
               "List every executed step with its cycles in the report");
  cmd.add_option("--progress", options->progress,
                 "Compile progress bar: auto (a terminal and at least 5 expensive ops), true, false");
  return [options] { return Run(*options); };
}

const Registration kRun{"run", "Compile an HLO module, execute it on the tile simulator and write the report",
                        Setup};

}  // namespace
}  // namespace tileprof::cli
