// System sweep: GNU /usr/bin/size and `tileprof size` over every .a, .o and
// .so under /usr/lib and every ELF file in /usr/bin, in -A, -B and -A -x.
// Files go 100 to a process for speed; a batch that differs is narrowed to
// the single file so that the failure names it. Skipped without GNU size.
// Under AddressSanitizer only -A is swept: the three modes parse each file
// the same way and differ in printing, which the unit tests cover, and the
// full sweep was two minutes of the sanitizer run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "size_test_util.h"
#include "tests/sanitizers.h"

namespace tileprof::elf {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SweepFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  auto options = fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it("/usr/lib", options, ec), end; it != end;
       it.increment(ec)) {
    if (ec) break;
    std::string ext = it->path().extension().string();
    if ((ext == ".a" || ext == ".o" || ext == ".so") && !it->is_directory(ec))
      files.push_back(it->path().string());
  }
  for (const auto& entry : fs::directory_iterator("/usr/bin", ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    char magic[4] = {};
    if (in.read(magic, 4) && std::memcmp(magic,
                                         "\x7f"
                                         "ELF",
                                         4) == 0)
      files.push_back(entry.path().string());
  }
  return files;
}

struct Outcome {
  testing::Printed gnu;
  testing::Printed ours;
  bool same() const {
    return gnu.out == ours.out && gnu.err == ours.err && gnu.exit_code == ours.exit_code;
  }
};

Outcome Compare(const std::vector<std::string>& options, const std::vector<std::string>& files) {
  std::vector<std::string> gnu = {"/usr/bin/size"};
  std::vector<std::string> ours = {TILEPROF_CLI, "size"};
  for (const auto& o : options) {
    gnu.push_back(o);
    ours.push_back(o);
  }
  gnu.insert(gnu.end(), files.begin(), files.end());
  ours.insert(ours.end(), files.begin(), files.end());
  return {testing::RunProcess(gnu, "", "/usr/bin/size: "),
          testing::RunProcess(ours, "", "tileprof: size: ")};
}

TEST(SizeSystemSweep, MatchesGnuSizeOnEverySystemObject) {
  if (!fs::exists("/usr/bin/size")) GTEST_SKIP() << "GNU size is not installed";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> files = SweepFiles();
  ASSERT_GT(files.size(), 100u) << "too few system files to be a meaningful sweep";
  const std::vector<std::vector<std::string>> modes =
      kUnderAddressSanitizer ? std::vector<std::vector<std::string>>{{"-A"}}
                             : std::vector<std::vector<std::string>>{{"-A"}, {"-B"}, {"-A", "-x"}};
  int differences = 0;
  for (const auto& mode : modes) {
    for (size_t i = 0; i < files.size(); i += 100) {
      std::vector<std::string> batch(files.begin() + i,
                                     files.begin() + std::min(files.size(), i + 100));
      if (Compare(mode, batch).same()) continue;
      for (const std::string& file : batch) {
        Outcome one = Compare(mode, {file});
        if (one.same()) continue;
        ++differences;
        ADD_FAILURE() << "size " << mode[0] << (mode.size() > 1 ? " " + mode[1] : "") << " " << file
                      << "\n  exit " << one.gnu.exit_code << " vs " << one.ours.exit_code
                      << "\n  GNU stderr: " << one.gnu.err << "\n  our stderr: " << one.ours.err
                      << (one.gnu.out == one.ours.out ? "" : "\n  stdout differs");
        if (differences > 20) FAIL() << "stopping after 20 differences";
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("compared %zu files x %zu modes with GNU size in %.1f s\n", files.size(),
              modes.size(), seconds);
  EXPECT_EQ(differences, 0);
}

}  // namespace
}  // namespace tileprof::elf
