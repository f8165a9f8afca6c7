// Tests for elfdump/ar_reader.h: archive recognition and the member walk for
// every variant GNU size reads (spec size-sysv.md §3, §5), and malformed
// archives. Archives are byte literals with one comment per header field,
// or built member by member with ArMember.
#include "elfdump/ar_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "size_test_util.h"

namespace tileprof::elf {
namespace {

using testing::ArMember;
using testing::ExpectLikeGnu;
using testing::SysV;
using testing::TestElf;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

struct Seen {
  std::string name;
  std::string archive;
  std::string bytes;
  uint64_t nominal = 0;
};

// Recognises and walks `archive`; returns the members and the walk status
// (and sets `*problem` when the walk stops early).
std::pair<std::vector<Seen>, Status> Walk(const std::string& archive, FileProvider* files = nullptr,
                                          const std::string& path = "a.a",
                                          WalkProblem* problem = nullptr) {
  MemoryFileProvider none;
  std::vector<Seen> seen;
  auto layout = RecognizeArchive(Bytes(archive), archive.size());
  if (!layout) return {seen, MakeError("not recognized")};
  Status status = ForEachMember(
      Bytes(archive), archive.size(), *layout, path, files ? *files : none,
      [&](const ArchiveMember& m) {
        seen.push_back({std::string(m.name), std::string(m.archive),
                        std::string(m.bytes.begin(), m.bytes.end()), m.nominal_size});
      },
      problem);
  return {seen, status};
}

// A GNU archive as `ar rcs` writes it: an empty symbol table, a long-name
// table, one long-named member (odd size, so padded) and one short-named one.
TEST(ArReader, GnuArchiveWithSymbolTableAndLongNames) {
  const std::string archive = std::string(
      "!<arch>\n"                // global header
      "/               "         // ar_name: "/", the symbol table
      "0           "             // ar_date
      "0     "                   // ar_uid
      "0     "                   // ar_gid
      "0       "                 // ar_mode
      "4         "               // ar_size: 4
      "`\n"                      // ar_fmag
      "\0\0\0\0"                 // symbol count 0 (big-endian)
      "//              "         // ar_name: "//", the long-name table
      "            "             // ar_date (blank in GNU ar output)
      "      "                   // ar_uid
      "      "                   // ar_gid
      "        "                 // ar_mode
      "22        "               // ar_size: 22
      "`\n"                      // ar_fmag
      "a_long_member_name.o/\n"  // long name at offset 0, "/\n" ends it
      "/0              "         // ar_name: long name at offset 0
      "0           "             // ar_date
      "0     "                   // ar_uid
      "0     "                   // ar_gid
      "644     "                 // ar_mode
      "3         "               // ar_size: 3 (odd: a pad byte follows)
      "`\n"                      // ar_fmag
      "abc\n"                    // data + pad
      "s.o/            "         // ar_name: short name "s.o"
      "0           "             // ar_date
      "0     "                   // ar_uid
      "0     "                   // ar_gid
      "644     "                 // ar_mode
      "2         "               // ar_size: 2
      "`\n"                      // ar_fmag
      "xy",                      // data
      8 + 60 + 4 + 60 + 22 + 60 + 4 + 60 + 2);
  auto layout = RecognizeArchive(Bytes(archive), archive.size());
  ASSERT_TRUE(layout);
  EXPECT_FALSE(layout->thin);
  EXPECT_TRUE(layout->has_map);
  EXPECT_EQ(layout->first_member, 8u + 60 + 4 + 60 + 22);
  ASSERT_TRUE(layout->long_names);
  auto [seen, status] = Walk(archive);
  ASSERT_TRUE(status) << status.error().message();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "a_long_member_name.o");
  EXPECT_EQ(seen[0].bytes, "abc");
  EXPECT_EQ(seen[0].archive, "a.a");
  EXPECT_EQ(seen[1].name, "s.o");
  EXPECT_EQ(seen[1].bytes, "xy");
}

TEST(ArReader, Sym64SymbolTableIsSkipped) {
  std::string map(8, '\0');  // 64-bit big-endian count 0
  std::string archive = "!<arch>\n" + ArMember("/SYM64/", map) + ArMember("m.o/", "data");
  auto [seen, status] = Walk(archive);
  ASSERT_TRUE(status);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].name, "m.o");
}

TEST(ArReader, BsdArchiveNamesAndSymdef) {
  // __.SYMDEF: 4-byte table size (0), 4-byte string size (0); then a member
  // whose 13-byte name follows its header and is counted in ar_size.
  std::string symdef(8, '\0');
  std::string archive = "!<arch>\n" + ArMember("__.SYMDEF", symdef) +
                        ArMember("#1/13", "long_name.obj" + std::string("DATA")) +
                        ArMember("short.o", "xy");
  auto layout = RecognizeArchive(Bytes(archive), archive.size());
  ASSERT_TRUE(layout);
  EXPECT_TRUE(layout->has_map);
  auto [seen, status] = Walk(archive);
  ASSERT_TRUE(status);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "long_name.obj");
  EXPECT_EQ(seen[0].bytes, "DATA");
  EXPECT_EQ(seen[1].name, "short.o");
}

TEST(ArReader, LlvmBsdSymbolTableIsAnOrdinaryMemberForBfd) {
  // llvm-ar writes "#1/12" + "__.SYMDEF\0\0\0": BFD only knows "#1/20", so
  // the table is a member named __.SYMDEF, which is not an object.
  std::string archive =
      "!<arch>\n" + ArMember("#1/12", std::string("__.SYMDEF\0\0\0", 12) + std::string(8, '\0'));
  ExpectLikeGnu({{"l.a", archive}}, {"l.a"}, SysV(),
                {"", "__.SYMDEF: file format not recognized\n", 3});
}

TEST(ArReader, ThinArchiveMembersComeFromFilesBesideTheArchive) {
  TestElf elf;
  elf.machine = 248;
  elf.sections = {{.name = ".text", .flags = 6, .data = "abcd"}};
  // Thin: every name goes through `//`, no data follows the headers.
  std::string names = "t1.o/\nsub/t2.o/\n";
  std::string thin =
      "!<thin>\n" + ArMember("//", names) + ArMember("/0", "", "100") + ArMember("/6", "", "100");
  std::map<std::string, std::string> files = {
      {"dir/thin.a", thin}, {"dir/t1.o", elf.Build()}, {"dir/sub/t2.o", elf.Build()}};
  MemoryFileProvider provider;
  for (auto& [p, b] : files) provider.Add(p, b);
  auto [seen, status] = Walk(thin, &provider, "dir/thin.a");
  ASSERT_TRUE(status) << status.error().message();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "dir/t1.o");
  EXPECT_EQ(seen[1].name, "dir/sub/t2.o");
  EXPECT_EQ(seen[1].archive, "dir/thin.a");
  ExpectLikeGnu(files, {"dir/thin.a"}, SysV(),
                {"dir/t1.o   (ex dir/thin.a):\nsection   size   addr\n.text      4      0\n"
                 "Total      4\n\n\n"
                 "dir/sub/t2.o   (ex dir/thin.a):\nsection   size   addr\n.text      4      0\n"
                 "Total      4\n\n\n",
                 "", 0});
}

TEST(ArReader, ThinArchiveWithAMissingMemberStops) {
  std::string thin = "!<thin>\n" + ArMember("//", "gone.o/\n") + ArMember("/0", "", "10");
  ExpectLikeGnu({{"thin.a", thin}}, {"thin.a"}, SysV(),
                {"", "thin.a: No such file or directory\n", 2});
}

TEST(ArReader, ThinArchiveMemberThatIsADirectory) {
  std::string thin = "!<thin>\n" + ArMember("//", "d/\n") + ArMember("/0", "", "10");
  MemoryFileProvider provider;
  provider.AddDirectory("d");
  WalkProblem problem = WalkProblem::kMalformed;
  auto [seen, status] = Walk(thin, &provider, "thin.a", &problem);
  ASSERT_FALSE(status);
  // The member header "/0" starts at 8 + 60 + 4 ("d/\n" padded) = 72.
  EXPECT_EQ(status.error().message(),
            "truncated or malformed archive (ar_name of member \"d\" names a directory, not an "
            "object file at offset 72)");
  EXPECT_EQ(problem, WalkProblem::kNotRecognized);
  // `tileprof size` keeps GNU's words.
  provider.Add("thin.a", thin);
  SizeResult size = RunSize({"thin.a"}, SysV(), provider);
  EXPECT_EQ(size.ErrText(""), "thin.a: file format not recognized\n");
  EXPECT_EQ(size.exit_code, 2);
}

TEST(ArReader, ThinArchivePointingIntoItselfIsMalformed) {
  // "/0:8" names member offset 8 of a nested archive; the nested archive is
  // the thin archive itself (binutils PR 15140).
  std::string thin = "!<thin>\n" + ArMember("//", "self.a/\n") + ArMember("/0:8", "", "10");
  ExpectLikeGnu({{"self.a", thin}}, {"self.a"}, SysV(), {"", "self.a: malformed archive\n", 2});
}

TEST(ArReader, ThinArchiveMemberOfANestedArchive) {
  TestElf elf;
  elf.sections = {{.name = ".data", .flags = 3, .data = "dd"}};
  std::string inner = "!<arch>\n" + ArMember("x.o/", elf.Build());
  std::string thin = "!<thin>\n" + ArMember("//", "inner.a/\n") + ArMember("/0:8", "", "10");
  std::map<std::string, std::string> files = {{"thin.a", thin}, {"inner.a", inner}};
  ExpectLikeGnu(files, {"thin.a"}, SysV(),
                {"x.o   (ex inner.a):\nsection   size   addr\n.data      2      0\n"
                 "Total      2\n\n\n",
                 "", 0});
}

TEST(ArReader, MalformedHeadersStopTheWalkAfterEarlierMembers) {
  // Each error names the field, the member and the field's offset, as LLVM's
  // do; `tileprof size` prints GNU's "malformed archive" for all of them
  // (kMalformed; NegativeSizesAsBfdSeesThem checks its output).
  // "a.o" takes bytes 8..69, so the second header starts at 70 (ar_size at
  // 118, ar_fmag at 128); after the 66-byte `//` member it starts at 136.
  const std::string ok = ArMember("a.o/", "12");
  struct Case {
    const char* what;
    std::string archive;
    std::string error;
  } cases[] = {
      {"bad ar_fmag", "!<arch>\n" + ok + ArMember("b.o/", "34", std::nullopt, "XX"),
       "truncated or malformed archive (ar_fmag of member \"b.o/\" is \"XX\", not \"`\\n\" at "
       "offset 128)"},
      {"non-numeric ar_size", "!<arch>\n" + ok + ArMember("b.o/", "34", std::string("abc")),
       "truncated or malformed archive (ar_size of member \"b.o/\" is not a decimal number: "
       "\"abc\" at offset 118)"},
      {"long name index out of range",
       "!<arch>\n" + ArMember("//", "x.o/\n") + ok + ArMember("/99", "34"),
       "truncated or malformed archive (ar_name of member \"/99\" indexes past the 5-byte "
       "long-name table at offset 136)"},
      {"negative size wraps back past the header (PR 19256)",
       "!<arch>\n" + ok + ArMember("b.o/", "34", std::string("-5")),
       "truncated or malformed archive (ar_size of member \"b.o\" is \"-5\": the next header "
       "would come before its data at offset 118)"},
  };
  for (const Case& c : cases) {
    WalkProblem problem = WalkProblem::kUnreadable;
    auto [seen, status] = Walk(c.archive, nullptr, "a.a", &problem);
    ASSERT_FALSE(status) << c.what;
    EXPECT_EQ(status.error().message(), c.error) << c.what;
    EXPECT_EQ(problem, WalkProblem::kMalformed) << c.what;
    ASSERT_GE(seen.size(), 1u) << c.what;
    EXPECT_EQ(seen[0].name, "a.o") << c.what;
  }
}

TEST(ArReader, NegativeSizesAsBfdSeesThem) {
  // sscanf accepts a sign. A small negative size makes the next offset wrap
  // below the current one: "malformed archive". A larger one lands beyond
  // 2^63, where bfd_seek fails with EINVAL: "file truncated". Either way the
  // member itself was shown first.
  TestElf elf;
  elf.sections = {{.name = ".text", .flags = 6, .data = "t"}};
  std::string member = elf.Build();
  for (auto [size, message] :
       {std::pair{"-5", "malformed archive"}, std::pair{"-9999", "file truncated"}}) {
    std::string archive = "!<arch>\n" + ArMember("m.o/", member, std::string(size));
    ExpectLikeGnu({{"n.a", archive}}, {"n.a"}, SysV(),
                  {"m.o   (ex n.a):\nsection   size   addr\n.text      1      0\n"
                   "Total      1\n\n\n",
                   std::string("n.a: ") + message + "\n", 2});
  }
}

TEST(ArReader, ThinSelfReferenceAndTruncationAreLocated) {
  // The "/0:8" header starts at 8 + 60 + 8 ("self.a/\n") = 76.
  WalkProblem problem = WalkProblem::kUnreadable;
  std::string thin = "!<thin>\n" + ArMember("//", "self.a/\n") + ArMember("/0:8", "", "10");
  auto [seen, status] = Walk(thin, nullptr, "self.a", &problem);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(),
            "truncated or malformed archive (ar_name of member \"self.a\" points into the thin "
            "archive itself at offset 76)");
  EXPECT_EQ(problem, WalkProblem::kMalformed);
  // ar_size -9999 after the header at 8: the next header would start at
  // 68 + 2^64 - 9999, padded even, past what bfd_seek reaches.
  std::string archive = "!<arch>\n" + ArMember("m.o/", "12", std::string("-9999"));
  auto [seen2, status2] = Walk(archive, nullptr, "n.a", &problem);
  ASSERT_FALSE(status2);
  EXPECT_EQ(status2.error().message(),
            "truncated or malformed archive (next member header beyond the largest file offset "
            "(2^63 - 1) at offset 18446744073709541686)");
  EXPECT_EQ(problem, WalkProblem::kTruncated);
  EXPECT_EQ(seen2.size(), 1u);
}

TEST(ArReader, ShortTailsAndOversizedMembersEndQuietly) {
  // Fewer than 60 bytes after the last member: the walk just ends.
  auto [seen, status] = Walk("!<arch>\n" + ArMember("a.o/", "12") + "junk");
  ASSERT_TRUE(status);
  EXPECT_EQ(seen.size(), 1u);
  // ar_size beyond the end: the member is clipped, BFD's idea of its size
  // is min(ar_size, archive size), and the walk ends after it.
  std::string big = "!<arch>\n" + ArMember("a.o/", "12", std::string("5000"));
  auto [seen2, status2] = Walk(big);
  ASSERT_TRUE(status2);
  ASSERT_EQ(seen2.size(), 1u);
  EXPECT_EQ(seen2[0].bytes, "12");
  EXPECT_EQ(seen2[0].nominal, big.size());
}

TEST(ArReader, RecognitionFailures) {
  auto recognized = [](const std::string& a) { return RecognizeArchive(Bytes(a), a.size()); };
  EXPECT_TRUE(recognized("!<arch>\n"));      // empty archive
  EXPECT_FALSE(recognized("!<arch>\nabc"));  // 1..15 bytes after the magic
  EXPECT_FALSE(recognized("!<arch"));
  EXPECT_FALSE(
      recognized("\x7f"
                 "ELF"));
  // A symbol table whose count does not fit its size.
  EXPECT_FALSE(recognized("!<arch>\n" + ArMember("/", std::string("\0\0\0\x09", 4))));
  // A long-name table larger than the file.
  EXPECT_FALSE(recognized("!<arch>\n" + ArMember("//", "x", std::string("999"))));
  ExpectLikeGnu({{"short.a", "!<arch>\nabc"}}, {"short.a"}, SysV(),
                {"", "short.a: file format not recognized\n", 3});
}

TEST(ArReader, NestedArchiveMembersAreSkipped) {
  TestElf elf;
  elf.sections = {{.name = ".text", .flags = 6, .data = "t"}};
  std::string inner = "!<arch>\n" + ArMember("in.o/", elf.Build());
  std::string outer = "!<arch>\n" + ArMember("inner.a/", inner) + ArMember("o.o/", elf.Build()) +
                      ArMember("notes.txt/", "hello\n");
  ExpectLikeGnu({{"outer.a", outer}}, {"outer.a"}, SysV(),
                {"o.o   (ex outer.a):\nsection   size   addr\n.text      1      0\n"
                 "Total      1\n\n\n",
                 "notes.txt: file format not recognized\n", 3});
}

TEST(ArReader, ManyEmptyMembersWalkInLinearSteps) {
  std::string archive = "!<arch>\n";
  for (int i = 0; i < 20000; ++i) archive += ArMember("e/", "");
  auto [seen, status] = Walk(archive);
  ASSERT_TRUE(status);
  EXPECT_EQ(seen.size(), 20000u);
}

}  // namespace
}  // namespace tileprof::elf
