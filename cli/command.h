// Subcommand registry. Each file in cli/ defines one subcommand and registers
// it with a file-scope `const Registration`, so adding a command means adding
// a file: main.cc never changes and no shared table is edited.
//
//   namespace {
//   RunFn Setup(CLI::App& cmd) {
//     auto opts = std::make_shared<Options>();
//     cmd.add_flag("-x", opts->hex, "...");
//     return [opts] { return Run(*opts); };   // the exit status
//   }
//   const Registration kSize{"size", "List section sizes ...", Setup};
//   }
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace tileprof::cli {

// Exit statuses shared by every subcommand (a few, like `size`, follow their
// peer's codes instead, and say so in their help).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

using RunFn = std::function<int()>;
using SetupFn = std::function<RunFn(CLI::App&)>;

struct Command {
  std::string name;
  std::string summary;
  SetupFn setup;
};

// Commands in registration order; main sorts them by name for --help.
std::vector<Command>& Registry();

struct Registration {
  Registration(std::string name, std::string summary, SetupFn setup) {
    Registry().push_back({std::move(name), std::move(summary), std::move(setup)});
  }
};

// Prints "tileprof: <command>: <message>" to stderr; the one diagnostic form.
void PrintDiagnostic(std::string_view command, std::string_view message);

// Ends the process with `code` once every output is written and closed,
// without destroying what the command built: a compiled graph is millions of
// small allocations, and freeing them took 0.8 s of a 6 s mobilenet_v2
// compile after its report was written (clang's -disable-free, for the same
// reason). Flushes stdio first. Under AddressSanitizer it returns `code`, so
// that LeakSanitizer still checks the whole run.
int ExitWithoutTeardown(int code);

// The root app, for `help <command>` (set by main before parsing).
CLI::App*& RootApp();

}  // namespace tileprof::cli
