#include "engine/compiler/compile_log.h"

#include <fmt/format.h>
#include <sys/time.h>
#include <unistd.h>

#include <ctime>

namespace tileprof::engine {

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  if (text == "error" || text == "3")
    *level = LogLevel::kError;
  else if (text == "warning" || text == "2")
    *level = LogLevel::kWarning;
  else if (text == "info" || text == "1")
    *level = LogLevel::kInfo;
  else if (text == "verbose" || text == "0")
    *level = LogLevel::kVerbose;
  else
    return false;
  return true;
}

void CompileLog::Write(LogLevel level, std::string_view where, std::string_view message) {
  if (!Enabled(level)) return;
  timeval now{};
  gettimeofday(&now, nullptr);
  std::tm local{};
  time_t seconds = now.tv_sec;
  localtime_r(&seconds, &local);
  // VLOG lines are INFO lines in TensorFlow's output; only the threshold differs.
  char severity = level == LogLevel::kError ? 'E' : level == LogLevel::kWarning ? 'W' : 'I';
  std::string line = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}: {} tileprof/{}] {}\n",
                                 local.tm_year + 1900, local.tm_mon + 1, local.tm_mday,
                                 local.tm_hour, local.tm_min, local.tm_sec,
                                 static_cast<long>(now.tv_usec), severity, where, message);
  std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

uint64_t ResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  int fields = std::fscanf(statm, "%llu %llu", &size, &resident);
  std::fclose(statm);
  if (fields != 2) return 0;
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string PhaseEndText(std::string_view name, int64_t duration_ms, int64_t rss_diff_bytes) {
  return fmt::format("Ending phase: {} (duration {} ms; diff RSS: {:g} MB)", name, duration_ms,
                     static_cast<double>(rss_diff_bytes) / (1024.0 * 1024.0));
}

PhaseScope::PhaseScope(CompileLog& log, std::string name)
    : log_(log),
      name_(std::move(name)),
      start_(std::chrono::steady_clock::now()),
      start_rss_(ResidentBytes()) {
  log_.Info("poplar", "Starting phase: " + name_);
}

int64_t PhaseScope::ElapsedMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start_)
      .count();
}

PhaseScope::~PhaseScope() {
  int64_t diff = static_cast<int64_t>(ResidentBytes()) - static_cast<int64_t>(start_rss_);
  log_.Info("poplar", PhaseEndText(name_, ElapsedMs(), diff));
}

}  // namespace tileprof::engine
