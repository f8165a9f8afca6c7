// Test helpers for the `size` tests (elf_reader_test, ar_reader_test,
// gnu_size_test): an ELF image writer that places every field where a test
// says (so malformed images are one field away from valid ones), an ar
// member writer, and a runner for GNU size on the same bytes, used to check
// that the outputs pinned in the tests are still what /usr/bin/size prints.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "elfdump/file_provider.h"
#include "elfdump/gnu_size.h"

namespace tileprof::elf::testing {

// Appends `value` as `width` bytes in the given byte order.
inline void Put(std::string* out, uint64_t value, int width, bool big_endian) {
  for (int i = 0; i < width; ++i) {
    int shift = big_endian ? 8 * (width - 1 - i) : 8 * i;
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

struct TestSection {
  std::string name{};
  uint32_t type = 1;  // SHT_PROGBITS
  uint64_t flags = 0;
  uint64_t addr = 0;
  std::string data{};                     // contents written to the file
  std::optional<uint64_t> size{};         // sh_size (default: data.size())
  std::optional<uint64_t> offset{};       // sh_offset (default: where data goes)
  std::optional<uint32_t> name_offset{};  // sh_name (default: in .shstrtab)
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t addralign = 1;
  uint64_t entsize = 0;
};

// An ELF image: header, section contents (8-aligned), .shstrtab last unless
// the test places it, then the section header table.
struct TestElf {
  bool is_64 = true;
  bool big_endian = false;
  uint16_t type = 1;                  // ET_REL
  uint16_t machine = 62;              // EM_X86_64
  std::vector<TestSection> sections;  // index 1..n; index 0 is all zero
  bool add_shstrtab = true;           // append .shstrtab and point e_shstrndx at it
  std::optional<uint32_t> shstrndx;   // e_shstrndx override
  std::optional<uint32_t> shnum;      // e_shnum override
  std::optional<uint64_t> shoff;      // e_shoff override
  std::vector<uint64_t> phdr_aligns;  // one PT_NULL program header per entry

  std::string Build() const {
    std::vector<TestSection> all = sections;
    std::string names(1, '\0');
    auto name_of = [&](const std::string& n) -> uint32_t {
      if (n.empty()) return 0;
      uint32_t at = static_cast<uint32_t>(names.size());
      names += n + '\0';
      return at;
    };
    std::vector<uint32_t> name_offsets;
    for (const TestSection& s : all) name_offsets.push_back(name_of(s.name));
    uint32_t strndx = 0;
    if (add_shstrtab) {
      TestSection shstrtab;
      shstrtab.name = ".shstrtab";
      shstrtab.type = 3;
      name_offsets.push_back(name_of(shstrtab.name));
      shstrtab.data = names;
      all.push_back(shstrtab);
      strndx = static_cast<uint32_t>(all.size());
    }
    const int w = is_64 ? 8 : 4;
    const size_t ehsize = is_64 ? 64 : 52;
    const size_t phsize = is_64 ? 56 : 32;
    std::string body(ehsize, '\0');
    const size_t phoff = phdr_aligns.empty() ? 0 : body.size();
    for (uint64_t align : phdr_aligns) {
      std::string ph;
      if (is_64) {
        Put(&ph, 0, 4, big_endian);                              // p_type PT_NULL
        Put(&ph, 0, 4, big_endian);                              // p_flags
        for (int k = 0; k < 5; ++k) Put(&ph, 0, 8, big_endian);  // offset..memsz
        Put(&ph, align, 8, big_endian);                          // p_align
      } else {
        for (int k = 0; k < 7; ++k) Put(&ph, 0, 4, big_endian);
        Put(&ph, align, 4, big_endian);
      }
      body += ph;
    }
    std::vector<uint64_t> offsets;
    for (const TestSection& s : all) {
      while (body.size() % 8) body.push_back('\0');
      offsets.push_back(s.offset.value_or(s.data.empty() && s.type == 0 ? 0 : body.size()));
      body += s.data;
    }
    while (body.size() % 8) body.push_back('\0');
    const uint64_t table = shoff.value_or(body.size());
    std::string headers(is_64 ? 64 : 40, '\0');  // section 0
    for (size_t i = 0; i < all.size(); ++i) {
      const TestSection& s = all[i];
      Put(&headers, s.name_offset.value_or(name_offsets[i]), 4, big_endian);
      Put(&headers, s.type, 4, big_endian);
      Put(&headers, s.flags, w, big_endian);
      Put(&headers, s.addr, w, big_endian);
      Put(&headers, offsets[i], w, big_endian);
      Put(&headers, s.size.value_or(s.data.size()), w, big_endian);
      Put(&headers, s.link, 4, big_endian);
      Put(&headers, s.info, 4, big_endian);
      Put(&headers, s.addralign, w, big_endian);
      Put(&headers, s.entsize, w, big_endian);
    }
    body += headers;
    std::string h = std::string(
        "\x7f"
        "ELF",
        4);
    h.push_back(is_64 ? 2 : 1);                                // EI_CLASS
    h.push_back(big_endian ? 2 : 1);                           // EI_DATA
    h.push_back(1);                                            // EI_VERSION
    h.append(9, '\0');                                         // EI_OSABI, EI_ABIVERSION, padding
    Put(&h, type, 2, big_endian);                              // e_type
    Put(&h, machine, 2, big_endian);                           // e_machine
    Put(&h, 1, 4, big_endian);                                 // e_version
    Put(&h, 0, w, big_endian);                                 // e_entry
    Put(&h, phoff, w, big_endian);                             // e_phoff
    Put(&h, table, w, big_endian);                             // e_shoff
    Put(&h, 0, 4, big_endian);                                 // e_flags
    Put(&h, ehsize, 2, big_endian);                            // e_ehsize
    Put(&h, phdr_aligns.empty() ? 0 : phsize, 2, big_endian);  // e_phentsize
    Put(&h, phdr_aligns.size(), 2, big_endian);                // e_phnum
    Put(&h, is_64 ? 64 : 40, 2, big_endian);                   // e_shentsize
    Put(&h, shnum.value_or(static_cast<uint32_t>(all.size() + 1)), 2, big_endian);  // e_shnum
    Put(&h, shstrndx.value_or(strndx), 2, big_endian);                              // e_shstrndx
    body.replace(0, ehsize, h);
    return body;
  }
};

// One ar member header and its data; `size` overrides the ar_size field.
inline std::string ArMember(const std::string& name, const std::string& data,
                            std::optional<std::string> size_field = std::nullopt,
                            const std::string& fmag = "`\n") {
  char header[61];
  std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10s", name.c_str(), "0", "0", "0",
                "644", size_field ? size_field->c_str() : std::to_string(data.size()).c_str());
  std::string out(header, 58);
  out += fmag;
  out += data;
  if (data.size() % 2) out.push_back('\n');
  return out;
}

// What a size run printed: stdout, stderr with the program prefix removed
// from every line, and the exit status.
struct Printed {
  std::string out;
  std::string err;
  int exit_code = 0;
};

inline std::string StripPrefix(const std::string& err, const std::string& prefix) {
  std::string result;
  std::istringstream lines(err);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, prefix.size(), prefix) == 0) line.erase(0, prefix.size());
    result += line + '\n';
  }
  return result;
}

// Runs tileprof's RunSize in memory on `files` (path -> bytes).
inline Printed RunInMemory(const std::map<std::string, std::string>& files,
                           const std::vector<std::string>& paths, const SizeOptions& options) {
  MemoryFileProvider provider;
  for (const auto& [path, bytes] : files) provider.Add(path, bytes);
  SizeResult result = RunSize(paths, options, provider);
  return {result.out, result.ErrText(""), result.exit_code};
}

// Runs /usr/bin/size with `args` in a fresh directory holding `files`;
// nullopt when GNU size is not installed.
inline std::optional<Printed> RunGnu(const std::map<std::string, std::string>& files,
                                     const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  if (!fs::exists("/usr/bin/size")) return std::nullopt;
  fs::path dir =
      fs::temp_directory_path() / ("tileprof_size_test_" + std::to_string(::getpid()) + "_" +
                                   std::to_string(reinterpret_cast<uintptr_t>(&files)));
  fs::create_directories(dir);
  for (const auto& [path, bytes] : files) {
    fs::create_directories((dir / path).parent_path());
    std::ofstream(dir / path, std::ios::binary) << bytes;
  }
  std::string command = "cd '" + dir.string() + "' && size";
  for (const std::string& a : args) command += " '" + a + "'";
  command += " >out 2>err";
  int status = std::system(command.c_str());
  auto slurp = [&](const char* name) {
    std::ifstream in(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  Printed printed{slurp("out"), StripPrefix(slurp("err"), "size: "),
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1};
  fs::remove_all(dir);
  return printed;
}

// The size(1) arguments that correspond to `options` (without files).
inline std::vector<std::string> GnuArgs(const SizeOptions& options) {
  std::vector<std::string> args;
  args.push_back(options.format == SizeFormat::kSysV       ? "-A"
                 : options.format == SizeFormat::kBerkeley ? "-B"
                                                           : "-G");
  args.push_back(options.radix == 16 ? "-x" : options.radix == 8 ? "-o" : "-d");
  if (options.totals) args.push_back("-t");
  if (options.common) args.push_back("--common");
  return args;
}

// Runs `argv` (no shell) in `cwd` and captures stdout, stderr (with
// `prefix` removed from each line) and the exit status.
inline Printed RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                          const std::string& prefix) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path base = fs::temp_directory_path() / ("tileprof_size_run_" + std::to_string(::getpid()) +
                                               "_" + std::to_string(counter++));
  std::string out_path = base.string() + ".out";
  std::string err_path = base.string() + ".err";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) ::_exit(127);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  Printed printed{slurp(out_path), StripPrefix(slurp(err_path), prefix),
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1};
  fs::remove(out_path);
  fs::remove(err_path);
  return printed;
}

// Checks that tileprof prints `pinned` for `size <options> <paths>` over
// `files`, and, where GNU size is installed, that GNU still prints exactly
// that too (the pins were taken from /usr/bin/size 2.40).
inline void ExpectLikeGnu(const std::map<std::string, std::string>& files,
                          const std::vector<std::string>& paths, const SizeOptions& options,
                          const Printed& pinned) {
  Printed ours = RunInMemory(files, paths, options);
  EXPECT_EQ(ours.out, pinned.out);
  EXPECT_EQ(ours.err, pinned.err);
  EXPECT_EQ(ours.exit_code, pinned.exit_code);
  std::vector<std::string> args = GnuArgs(options);
  args.insert(args.end(), paths.begin(), paths.end());
  if (auto gnu = RunGnu(files, args)) {
    EXPECT_EQ(gnu->out, pinned.out) << "GNU size no longer prints the pinned stdout";
    EXPECT_EQ(gnu->err, pinned.err) << "GNU size no longer prints the pinned stderr";
    EXPECT_EQ(gnu->exit_code, pinned.exit_code);
  }
}

inline SizeOptions SysV(int radix = 10) {
  SizeOptions o;
  o.format = SizeFormat::kSysV;
  o.radix = radix;
  return o;
}

}  // namespace tileprof::elf::testing
