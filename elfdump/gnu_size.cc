// gnu_size.h: the driver of binutils/size.c (display_file, display_archive,
// display_bfd, print_sizes) over ElfReader, ar_reader and FileProvider.
#include "elfdump/gnu_size.h"

#include <optional>

#include "elfdump/ar_reader.h"
#include "elfdump/elf_reader.h"
#include "elfdump/size_format.h"

namespace tileprof::elf {
namespace {

// What GNU size prints for a walk that stopped: BFD's three words, not our
// located message (its output must stay byte-identical to GNU's); a thin
// member's unreadable file gets the provider's message, as in BFD.
std::string_view GnuWalkMessage(WalkProblem problem, const Error& error) {
  switch (problem) {
    case WalkProblem::kMalformed:
      return "malformed archive";
    case WalkProblem::kTruncated:
      return "file truncated";
    case WalkProblem::kNotRecognized:
      return "file format not recognized";
    case WalkProblem::kUnreadable:
      break;
  }
  return error.message();
}

class SizeRun {
 public:
  SizeRun(const SizeOptions& options, FileProvider& files, SizeSink& sink)
      : options_(options), files_(files), sink_(sink) {}

  int Run(const std::vector<std::string>& paths);

 private:
  void DisplayFile(const std::string& path);
  void DisplayMember(const ArchiveMember& member);
  // display_bfd for something that is not an archive (or a member that is
  // not one): recognise it as an object and print it, or complain.
  void DisplayObject(std::span<const uint8_t> bytes, uint64_t nominal, std::string_view name,
                     std::optional<std::string_view> archive, std::string_view diagnostic_name,
                     std::optional<uint64_t> element_size = {});
  void Err(std::string_view message) {
    Flush();
    sink_.Err(message);
  }
  void Flush() {
    if (!out_.empty()) sink_.Out(out_);
    out_.clear();
  }

  const SizeOptions& options_;
  FileProvider& files_;
  SizeSink& sink_;
  ElfReader reader_;
  int return_code_ = 0;
  bool fatal_ = false;
  bool header_printed_ = false;  // Berkeley/GNU titles, once per run
  uint64_t common_size_ = 0;     // a static in size.c: kept between objects
  BerkeleySums totals_;
  std::string out_;              // stdout not yet handed to the sink
  std::string diagnostic_name_;  // "archive(member)", reused per member
};

int SizeRun::Run(const std::vector<std::string>& paths) {
  if (paths.empty()) {
    DisplayFile("a.out");
  } else {
    for (const std::string& path : paths) {
      DisplayFile(path);
      if (fatal_) break;
    }
  }
  if (!fatal_ && options_.totals && options_.format != SizeFormat::kSysV) {
    AppendBerkeleyLine(&out_, totals_, options_, "(TOTALS)", std::nullopt);
    out_.push_back('\n');
  }
  Flush();
  return fatal_ ? 1 : return_code_;
}

void SizeRun::DisplayFile(const std::string& path) {
  // get_file_size (binutils/bucomm.c) runs before BFD opens anything.
  FileStatus status = files_.Stat(path);
  switch (status.kind) {
    case FileKind::kMissing:
      Err("'" + path + "': No such file");
      return_code_ = 1;
      return;
    case FileKind::kError:
      Err("Warning: could not locate '" + path + "'.  reason: " + status.error);
      return_code_ = 1;
      return;
    case FileKind::kDirectory:
      Err("Warning: '" + path + "' is a directory");
      return_code_ = 1;
      return;
    case FileKind::kOther:
      Err("Warning: '" + path + "' is not an ordinary file");
      return_code_ = 1;
      return;
    case FileKind::kRegular:
      break;
  }
  if (status.size < 1) {
    return_code_ = 1;  // an empty file: no message at all
    return;
  }
  auto contents = files_.Open(path);
  if (!contents) {
    Err(path + ": " + contents.error().message());
    return_code_ = 1;
    return;
  }
  std::span<const uint8_t> bytes = (*contents)->bytes();
  if (auto layout = RecognizeArchive(bytes, bytes.size())) {
    WalkProblem problem = WalkProblem::kMalformed;
    Status walked = ForEachMember(
        bytes, bytes.size(), *layout, path, files_,
        [this](const ArchiveMember& m) { DisplayMember(m); }, &problem);
    if (!walked && !fatal_) {
      Err(path + ": " + std::string(GnuWalkMessage(problem, walked.error())));
      return_code_ = 2;
    }
    return;
  }
  DisplayObject(bytes, bytes.size(), path, std::nullopt, path);
}

void SizeRun::DisplayMember(const ArchiveMember& member) {
  if (fatal_) return;
  // An archive inside an archive is skipped without a word.
  if (member.bytes.size() >= 8 && member.bytes[0] == '!' &&
      RecognizeArchive(member.bytes, member.nominal_size, member.element_size))
    return;
  diagnostic_name_.clear();
  if (member.in_thin_archive) {
    diagnostic_name_.append(member.name);
  } else {
    diagnostic_name_.append(member.archive);
    diagnostic_name_.push_back('(');
    diagnostic_name_.append(member.name);
    diagnostic_name_.push_back(')');
  }
  DisplayObject(member.bytes, member.nominal_size, member.name, member.archive, diagnostic_name_,
                member.element_size);
}

void SizeRun::DisplayObject(std::span<const uint8_t> bytes, uint64_t nominal, std::string_view name,
                            std::optional<std::string_view> archive,
                            std::string_view diagnostic_name,
                            std::optional<uint64_t> element_size) {
  const ElfObject& object = reader_.Read({bytes, nominal, diagnostic_name, element_size});
  // BFD prints its cached warnings when bfd_check_format returns, before the
  // object's table.
  for (const std::string& message : object.messages) Err(message);
  if (!object.recognized) {
    Err(std::string(name) + ": file format not recognized");
    return_code_ = 3;
    return;
  }
  if (options_.common) {
    std::vector<std::string> messages;
    auto common = reader_.CommonSize(&messages);
    for (const std::string& message : messages) Err(message);
    if (!common) {
      // bfd_fatal: the message, then exit (1) at once.
      Err(std::string(name) + ": " + common.error().message());
      fatal_ = true;
      return;
    }
    common_size_ = *common;
  }
  if (options_.format == SizeFormat::kSysV) {
    AppendSysv(&out_, object.sections, name, archive, options_, common_size_);
  } else {
    if (!header_printed_) {
      AppendBerkeleyHeader(&out_, options_);
      header_printed_ = true;
    }
    BerkeleySums sums = SumSections(object.sections, options_.format, common_size_);
    if (options_.totals) {
      totals_.text += sums.text;
      totals_.data += sums.data;
      totals_.bss += sums.bss;
    }
    AppendBerkeleyLine(&out_, sums, options_, name, archive);
  }
  out_.push_back('\n');
  // Hand over stdout in large pieces: few write(2) calls for big archives.
  if (out_.size() >= (1u << 16)) Flush();
}

class CollectingSink final : public SizeSink {
 public:
  explicit CollectingSink(SizeResult* result) : result_(result) {}
  void Out(std::string_view text) override { result_->out.append(text); }
  void Err(std::string_view diagnostic) override {
    result_->err.push_back({result_->out.size(), std::string(diagnostic)});
  }

 private:
  SizeResult* result_;
};

}  // namespace

int RunSize(const std::vector<std::string>& paths, const SizeOptions& options, FileProvider& files,
            SizeSink& sink) {
  SizeRun run(options, files, sink);
  return run.Run(paths);
}

SizeResult RunSize(const std::vector<std::string>& paths, const SizeOptions& options,
                   FileProvider& files) {
  SizeResult result;
  CollectingSink sink(&result);
  result.exit_code = RunSize(paths, options, files, sink);
  return result;
}

std::string SizeResult::ErrText(std::string_view prefix) const {
  std::string text;
  for (const Diagnostic& d : err) {
    text.append(prefix);
    text.append(d.text);
    text.push_back('\n');
  }
  return text;
}

std::string SizeResult::Interleaved(std::string_view prefix) const {
  std::string text;
  size_t written = 0;
  for (const Diagnostic& d : err) {
    text.append(out, written, d.out_offset - written);
    written = d.out_offset;
    text.append(prefix);
    text.append(d.text);
    text.push_back('\n');
  }
  text.append(out, written, std::string::npos);
  return text;
}

}  // namespace tileprof::elf
