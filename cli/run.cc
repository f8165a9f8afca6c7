// `tileprof run MODEL.hlo`: compile onto the tiles of a target, execute on
// the tile simulator --iterations times, print the scalar results of every
// execution, write the results as .npy files and the text report with its
// Execution section.
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "cli/session_flags.h"
#include "common/format.h"
#include "engine/session/event_sink.h"
#include "engine/session/precompile.h"
#include "engine/session/run_module.h"

namespace tileprof::cli {
namespace {

struct Options {
  SessionFlags session;
  engine::RunOptions run;
  std::string inputs = "zeros";            // --inputs: sets run.random_inputs
  std::string elided_constants = "error";  // --elided-constants: sets run.elided_constants
  bool show_execution_steps = false;
};

constexpr std::string_view kCommand = "run";

int Fail(std::string_view message, int status = kExitError) {
  PrintDiagnostic(kCommand, message);
  return status;
}

int Run(const Options& options) {
  Session prepared;
  if (auto stop = PrepareSession(options.session, kCommand, prepared)) return *stop;
  engine::SessionOptions& session = prepared.options;
  engine::ReportSettings& settings = prepared.settings;
  settings.text_execution_steps = options.show_execution_steps;
  engine::CompileLog log(stderr, prepared.env.log_level);
  auto events = engine::EventSink::Open(settings, {.path = settings.config.files.events}, &log);
  if (!events) return Fail(events.error().message());
  session.events = &*events;
  const std::string& model = options.session.model;
  auto compiled = engine::CompileForRun(model, session, prepared.precompile, log);
  if (!compiled) return CompileFailure(kCommand, model, compiled.error().message());

  engine::RunCallbacks callbacks;
  callbacks.executed = [](uint64_t execution, const std::vector<engine::ScalarResult>& scalars) {
    for (const engine::ScalarResult& scalar : scalars)
      std::cout << fmt::format("execution {}: {} ({}) = {}\n", execution, scalar.stream,
                               scalar.label, scalar.value);
  };
  callbacks.precompiled = [&compiled] {
    std::cout << engine::PrecompiledSavedMessage(compiled->cache.path) << "\n";
  };
  engine::RunOptions run = options.run;
  run.ipu_model = session.flags.use_ipu_model;
  auto ran =
      engine::RunCompiled(*compiled, run, settings, prepared.precompile, *events, log, callbacks);
  if (!ran) return Fail(ran.error().message());
  if (!ran->ran) return kExitOk;  // pre-compile mode

  const engine::Target& target = compiled->target;
  const double microseconds = static_cast<double>(ran->total_cycles) / target.ClockHz() * 1e6;
  std::cout << fmt::format("Ran {} on {}: {} execution(s) in {:.2f} s on {} host thread(s)\n",
                           compiled->module.name(), target.Describe(), options.run.iterations,
                           ran->seconds, ran->threads);
  std::cout << fmt::format("  Cycles:   {} (approx {} microseconds at {} MHz)\n",
                           WithThousands(ran->total_cycles), WithThousands(microseconds, 1),
                           WithThousands(target.ClockHz() / 1e6, 1));
  if (!options.run.outputs_dir.empty())
    std::cout << fmt::format("  Outputs:  {}\n", options.run.outputs_dir);
  for (const std::string& file : ran->files) std::cout << fmt::format("  Wrote:    {}\n", file);
  for (const std::string& note : ran->notes) std::cout << "  Note:     " << note << '\n';
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
      "A module reading a constant printed as {...} (values left out of the dump) is refused,\n"
      "unless --elided-constants fills it with zeros or random values (as --inputs random,\n"
      "from --seed and the constant's name), warning once per filled constant; complex, f8\n"
      "and sub-byte constants are never filled. The fill is made when the run starts, so a\n"
      "cached executable runs the same as a fresh compile.\n"
      "A module with an op the simulator cannot execute is refused before it runs, naming\n"
      "the instruction. Environment: as `tileprof compile`; POPLAR_LOG_LEVEL=INFO logs the\n"
      "device line, TF_POPLAR_VLOG_LEVEL=1 the Begin/End XLA compilation lines.");
  AddSessionFlags(cmd, options->session);
  cmd.add_option("--iterations", options->run.iterations, "Executions of the program")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--inputs", options->inputs, "Parameters without --input: zeros or random")
      ->check(CLI::IsMember({"zeros", "random"}))
      ->capture_default_str();
  cmd.add_option("--elided-constants", options->elided_constants,
                 "Constants printed as {...}: error (refuse to run), zeros or random")
      ->check(CLI::IsMember({"error", "zeros", "random"}))
      ->capture_default_str();
  cmd.add_option("--seed", options->run.seed,
                 "Seed of --inputs random, --elided-constants random and the device's seed "
                 "stream")
      ->capture_default_str();
  // One value per --input, so `--input a=x.npy MODEL` leaves MODEL alone.
  cmd.add_option("--input", options->run.input_files,
                 "NAME_OR_INDEX=FILE.npy for one parameter (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--outputs", options->run.outputs_dir, "Directory for out.<i>.npy result files");
  cmd.add_option("--threads", options->run.threads, "Host threads (default: all cores)");
  cmd.add_flag("--show-execution-steps", options->show_execution_steps,
               "List every executed step with its cycles in the report");
  return [options] {
    options->run.random_inputs = options->inputs == "random";
    options->run.elided_constants = engine::ParseElidedConstants(options->elided_constants)
                                        .value_or(engine::ElidedConstants::kError);
    return Run(*options);
  };
}

const Registration kRun{
    "run", "Compile an HLO module, execute it on the tile simulator and write the report", Setup};

}  // namespace
}  // namespace tileprof::cli
