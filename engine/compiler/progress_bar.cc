#include "engine/compiler/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>

namespace tileprof::engine {
namespace {

constexpr int kBarWidth = 50;

struct StageInfo {
  std::string_view text;
  int weight;
};

// The original's stages and weights (progress_bar.cc); they sum to 100.
constexpr std::array<StageInfo, 5> kStages = {{
    {"Step: Hlo Optimizations", 2},
    {"Step: Pre-Planning Operations", 2},
    {"Step: Graph Construction", 36},
    {"Step: Graph Compilation", 60},
    {"Compilation Finished", 0},
}};

}  // namespace

std::string_view CompileStageText(CompileStage stage) {
  return kStages[static_cast<size_t>(stage)].text;
}

int CompileProgressPercent(CompileStage stage, uint64_t done, uint64_t total) {
  int before = 0;
  for (size_t i = 0; i < static_cast<size_t>(stage); ++i) before += kStages[i].weight;
  if (stage == CompileStage::kFinished) return 100;
  int weight = kStages[static_cast<size_t>(stage)].weight;
  uint64_t within = total == 0 ? 0 : std::min(done, total) * static_cast<uint64_t>(weight) / total;
  return before + static_cast<int>(within);
}

std::string ProgressFrame(int percent, std::string_view stage_text,
                          std::chrono::milliseconds elapsed) {
  percent = std::clamp(percent, 0, 100);
  int pos = percent * kBarWidth / 100;
  auto tenths = static_cast<unsigned long long>(elapsed.count() / 100);
  return fmt::format("\33[2K[{}{}] {}% {} [Elapsed: {:02}:{:02}:{:02}.{}]\r", std::string(pos, '#'),
                     std::string(kBarWidth - pos, ' '), percent, stage_text, tenths / 36000,
                     tenths / 600 % 60, tenths / 10 % 60, tenths % 10);
}

bool ParseProgressMode(std::string_view text, ProgressMode* mode) {
  if (text == "auto")
    *mode = ProgressMode::kAuto;
  else if (text == "true" || text == "on" || text == "1")
    *mode = ProgressMode::kOn;
  else if (text == "false" || text == "off" || text == "0")
    *mode = ProgressMode::kOff;
  else
    return false;
  return true;
}

bool ShouldShowProgress(ProgressMode mode, std::FILE* out, bool verbose_logging,
                        int64_t expensive_instructions) {
  switch (mode) {
    case ProgressMode::kOn:
      return true;
    case ProgressMode::kOff:
      return false;
    case ProgressMode::kAuto:
      return out != nullptr && isatty(fileno(out)) && !verbose_logging &&
             expensive_instructions >= 5;
  }
  return false;
}

ProgressBar::ProgressBar(std::FILE* out, std::string_view module, std::chrono::milliseconds period)
    : out_(out), start_(std::chrono::steady_clock::now()), period_(period) {
  if (out_ == nullptr) return;
  std::string header = fmt::format("Compiling module {}:\n", module);
  std::fwrite(header.data(), 1, header.size(), out_);
  std::fflush(out_);
  thread_ = std::thread([this] { Loop(); });
}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Set(CompileStage stage, uint64_t done, uint64_t total) {
  total_ = total;
  done_ = done;
  stage_ = stage;
}

void ProgressBar::Draw() {
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start_);
  CompileStage stage = stage_;
  std::string frame =
      ProgressFrame(CompileProgressPercent(stage, done_, total_), CompileStageText(stage), elapsed);
  std::fwrite(frame.data(), 1, frame.size(), out_);
  std::fflush(out_);
}

void ProgressBar::Loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    Draw();
    wake_.wait_for(lock, period_, [this] { return stop_; });
  }
}

void ProgressBar::Finish() {
  if (out_ == nullptr) return;
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  stage_ = CompileStage::kFinished;
  Draw();
  std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace tileprof::engine
