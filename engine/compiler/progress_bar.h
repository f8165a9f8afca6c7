// The compile progress bar of ../shared/spec/executable-cache.md section 8.1:
//
//   Compiling module jit_train_step:
//   [#########################                         ] 50% Step: Graph Construction [Elapsed:
//   00:00:12.3]
//
// redrawn every 100 ms by a thread (each frame starts with "\33[2K" and ends
// with "\r"), drawn once more at the end and closed with a newline. The
// stages and their weights are the original's; the compiler reports progress
// within the current stage as (done, total).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tileprof::engine {

enum class CompileStage : uint8_t {
  kHloOptimizations,   // weight 2
  kPrePlanning,        // weight 2
  kGraphConstruction,  // weight 36: one tick per visited HLO instruction
  kGraphCompilation,   // weight 60
  kFinished,
};

// "Step: Graph Construction", ... "Compilation Finished".
std::string_view CompileStageText(CompileStage stage);

// Overall percentage for `done` of `total` within `stage`, 0-100, floored.
int CompileProgressPercent(CompileStage stage, uint64_t done, uint64_t total);

// One frame: "\33[2K[###...   ] 50% Step: Graph Construction [Elapsed: 00:00:12.3]\r".
std::string ProgressFrame(int percent, std::string_view stage_text,
                          std::chrono::milliseconds elapsed);

enum class ProgressMode : uint8_t { kAuto, kOn, kOff };

// "auto", "true", "false" (also "on"/"off", "1"/"0").
bool ParseProgressMode(std::string_view text, ProgressMode* mode);

// Whether the bar is shown: kAuto shows it only when `out` is a terminal,
// verbose logging is off (the log lines would tear the bar) and the module
// has at least 5 expensive instructions, as the original decides.
bool ShouldShowProgress(ProgressMode mode, std::FILE* out, bool verbose_logging,
                        int64_t expensive_instructions);

class ProgressBar {
 public:
  // Prints "Compiling module <module>:" and starts redrawing when `out` is
  // not null; with a null `out` every call is a no-op.
  ProgressBar(std::FILE* out, std::string_view module,
              std::chrono::milliseconds period = std::chrono::milliseconds(100));
  ~ProgressBar();  // Finish()es
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Stage and progress at once, as a (done, total) callback reports them.
  void Set(CompileStage stage, uint64_t done, uint64_t total);
  // Draws 100% "Compilation Finished" and the final newline. Idempotent.
  void Finish();

 private:
  void Draw();
  void Loop();

  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds period_;
  std::atomic<CompileStage> stage_{CompileStage::kHloOptimizations};
  std::atomic<uint64_t> done_{0}, total_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace tileprof::engine
