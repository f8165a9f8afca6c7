// Runs the built `tileprof` binary (TILEPROF_CLI) with a shell command line
// and captures stdout and stderr together, for end-to-end tests of commands.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tileprof::cli_test {

struct CliRun {
  std::string out;
  int status = -1;  // the exit status, -1 when killed by a signal
};

inline CliRun Tileprof(const std::string& args) {
  std::string command = std::string(TILEPROF_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  CliRun run;
  if (!pipe) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace tileprof::cli_test
