// tileprof: dispatches to the subcommand named on the command line. No logic
// of its own; every subcommand lives in its own file in cli/.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "cli/command.h"
#include "version.h"

namespace tileprof::cli {

std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}

CLI::App*& RootApp() {
  static CLI::App* root = nullptr;
  return root;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TILEPROF_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TILEPROF_ASAN 1
#endif

int ExitWithoutTeardown(int code) {
#ifdef TILEPROF_ASAN
  return code;
#else
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
#endif
}

void PrintDiagnostic(std::string_view command, std::string_view message) {
  std::fflush(stdout);  // keep stdout and stderr in order under 2>&1
  std::cerr << "tileprof: " << command << ": " << message << '\n';
}

}  // namespace tileprof::cli

int main(int argc, char** argv) {
  using namespace tileprof::cli;
  CLI::App app{
      "tileprof: profile ML graphs on tile-based accelerators (Graphcore IPU style).\n"
      "Run 'tileprof help <command>' for a command's options.",
      "tileprof"};
  app.set_version_flag("--version", std::string("tileprof ") + TILEPROF_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  RootApp() = &app;

  std::vector<Command> commands = Registry();
  std::sort(commands.begin(), commands.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  // Building every command's options costs more than GNU size's whole run
  // on a small archive, so when the command is named only that one is set
  // up; the full tree is built for --help, `help` and mistakes.
  std::string_view named = argc > 1 ? std::string_view(argv[1]) : std::string_view();
  bool only_named = !named.empty() && named != "help" &&
                    std::any_of(commands.begin(), commands.end(),
                                [&](const Command& c) { return c.name == named; });
  std::map<CLI::App*, RunFn> runners;
  for (const Command& command : commands) {
    if (only_named && command.name != named) continue;
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    runners[sub] = command.setup(*sub);
  }

  // CLI11 would only say "a subcommand is required" for a misspelt command.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(),
                   [&](const Command& c) { return c.name == argv[1]; })) {
    PrintDiagnostic("usage", std::string("'") + argv[1] +
                                 "' is not a tileprof command; 'tileprof --help' lists them");
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string where = "usage";
    for (CLI::App* sub : app.get_subcommands()) where = sub->get_name();
    PrintDiagnostic(where, e.what());
    std::cerr << "Run 'tileprof help" << (where == "usage" ? "" : " " + where) << "' for usage.\n";
    return kExitUsage;
  }
  for (CLI::App* sub : app.get_subcommands()) return runners.at(sub)();
  return kExitUsage;  // unreachable: require_subcommand(1)
}
