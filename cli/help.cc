// `tileprof help [command]`: the same text as `tileprof [command] --help`.
#include <iostream>

#include "cli/command.h"

namespace tileprof::cli {
namespace {

RunFn Setup(CLI::App& cmd) {
  auto topic = std::make_shared<std::string>();
  cmd.add_option("command", *topic, "The command to describe");
  return [topic]() {
    CLI::App* root = RootApp();
    if (topic->empty()) {
      std::cout << root->help();
      return kExitOk;
    }
    for (CLI::App* sub : root->get_subcommands({})) {
      if (sub->get_name() == *topic) {
        std::cout << sub->help(root->get_name());
        return kExitOk;
      }
    }
    PrintDiagnostic("help", "no command named '" + *topic + "'; 'tileprof --help' lists them");
    return kExitUsage;
  };
}

const Registration kHelp{"help", "Show help for tileprof or one of its commands", Setup};

}  // namespace
}  // namespace tileprof::cli
