// `tileprof info` against the gc-info outputs Graphcore published
// (../shared/corpus/published/ C04: tools 1.2.1 on an ipu1 C2 card; C05: the
// latest tools on an ipu21 C600; C06: a device list): the same field names in
// the same order, and a device list of the same shape.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "common/file.h"
#include "tests/cli_run.h"
#include "tests/published_corpus.h"

namespace tileprof {
namespace {

using cli_test::Tileprof;
using ::testing::HasSubstr;
using ::tileprof::testing::SharedPublished;

// The keys of the "  key: value" lines after "Device Info:".
std::vector<std::string> FieldNames(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "Device Info:") {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (!line.starts_with("  ")) break;
    names.push_back(line.substr(2, line.find(": ") - 2));
  }
  return names;
}

std::string Published(std::string_view name) {
  Expected<std::string> text = ReadFile(SharedPublished(name));
  EXPECT_TRUE(text);
  return text ? *text : "";
}

TEST(InfoCli, FieldsAreThoseOfThePublishedGcInfoOutputs) {
  std::vector<std::string> mk1 =
      FieldNames(Published("C04_docs_gc-info_device-info_c2_ipu1_cltools-1.2.1.txt"));
  std::vector<std::string> mk2 =
      FieldNames(Published("C05_docs_gc-info_-i_c600_ipu21_cltools-latest.txt"));
  ASSERT_EQ(mk1.size(), 31u);
  ASSERT_EQ(mk2.size(), 40u);
  const std::pair<std::string, const std::vector<std::string>*> cases[] = {
      {"ipu1", &mk1}, {"ipu2", &mk2}, {"ipu21", &mk2}};
  for (const auto& [arch, expected] : cases) {
    SCOPED_TRACE(arch);
    auto run = Tileprof("info --ipu-version " + arch);
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_EQ(FieldNames(run.out), *expected);
    EXPECT_THAT(run.out, HasSubstr("  ipu architecture: " + arch + "\n"));
    EXPECT_THAT(run.out, HasSubstr("  average board temp: N/A\n"));
  }
  // gc-info's spelling of the options: -d N -i.
  auto second = Tileprof("info --ipus 2 -d 1 -i --ipu-version ipu21");
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_THAT(second.out, HasSubstr("  id: 1\n"));
  EXPECT_THAT(second.out, HasSubstr("  clock: 1850MHz\n"));
  auto missing = Tileprof("info -d 2 --ipus 2");
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.out, HasSubstr("no device 2"));
}

// The shape of a list: per device, "single" or the size of a multi-IPU device.
std::vector<std::string> ListShape(const std::string& text) {
  std::vector<std::string> shape;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("-+- ")) {
      shape.push_back(line.find("[Multi IPU]") != std::string::npos ? "multi:0" : "single");
    } else if (line.starts_with(" |--- ") && !shape.empty()) {
      std::string& last = shape.back();
      last = "multi:" + std::to_string(std::stoi(last.substr(6)) + 1);
    }
  }
  return shape;
}

TEST(InfoCli, DeviceListHasTheShapeOfGcInfoList) {
  std::string published =
      Published("C06_docs_gc-info_list-devices_fabric_multi-ipu_cltools-latest.txt");
  auto run = Tileprof("info -l --ipus 4");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, ::testing::StartsWith("Graphcore device listing:\n"));
  EXPECT_EQ(ListShape(run.out), ListShape(published));
  EXPECT_THAT(ListShape(run.out), ::testing::ElementsAre("single", "single", "single", "single",
                                                         "multi:2", "multi:2", "multi:4"));
}

}  // namespace
}  // namespace tileprof
