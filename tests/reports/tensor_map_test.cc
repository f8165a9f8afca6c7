// Tensor map and instruction info JSON (../shared/spec/tensor-map.md): the
// exact compact layout, round trips, and the reader's checks.
#include "reports/tensor_map.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tileprof::report {
namespace {

TensorMap SpecExample() {
  TensorMap map;
  map.computations.push_back({"cluster_1.5",
                              {{"add.0",
                                0,
                                {32, 32},
                                "float",
                                false,
                                false,
                                1024,
                                {{0, 256}, {1, 256}, {2, 256}, {3, 256}},
                                "dense/add"}}});
  return map;
}

TEST(TensorMapJson, WritesTheSpecExampleExactly) {
  EXPECT_EQ(
      WriteTensorMapJson(SpecExample()),
      R"({"mappings":{"cluster_1.5":[["add.0",0,[32,32],"float",0,0,1024,[[0,256],[1,256],[2,256],[3,256]],"dense/add"]]}})");
}

TEST(TensorMapJson, FlagsAreNumbersAndEmptyTensorsHaveNoTiles) {
  TensorMap map;
  map.computations.push_back({"c", {{"k", 2, {}, "half", true, true, 0, {}, ""}}});
  EXPECT_EQ(WriteTensorMapJson(map), R"({"mappings":{"c":[["k",2,[],"half",1,1,0,[],""]]}})");
}

TEST(TensorMapJson, RoundTripKeepsComputationOrder) {
  TensorMap map = SpecExample();
  map.computations.push_back(
      {"fused.1", {{"p", 0, {4}, "int", false, true, 8, {{5, 3}, {1000, 5}}, "a/\"q\""}}});
  map.computations.push_back({"a_first_by_name", {}});
  Expected<TensorMap> read = ReadTensorMapJson(WriteTensorMapJson(map), "m.json");
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, map);
}

TEST(TensorMapJson, ReadsWhitespaceAndBooleanFlagsAsTheOriginalReaderDoes) {
  Expected<TensorMap> read = ReadTensorMapJson(
      "{ \"mappings\" : { \"c\" : [ [ \"a\", 1, [2], \"float\", true, false, 2, [ [7, 2] ], \"n\" "
      "] ] } }\n",
      "m");
  ASSERT_TRUE(read) << read.error().message();
  ASSERT_EQ(read->computations.size(), 1u);
  EXPECT_TRUE(read->computations[0].tensors[0].has_constant);
  EXPECT_EQ(read->computations[0].tensors[0].tiles, (std::vector<TileElements>{{7, 2}}));
}

void ExpectError(std::string_view text, std::string_view part) {
  Expected<TensorMap> read = ReadTensorMapJson(text, "m.json");
  ASSERT_FALSE(read) << text;
  EXPECT_NE(read.error().message().find(part), std::string::npos) << read.error().message();
}

TEST(TensorMapJson, RejectsWhatConsumersWouldMisread) {
  ExpectError("{", "m.json: not valid JSON");
  ExpectError(R"({"mapping":{}})", "\"mappings\" object");
  // 8 elements (no op name) is the published docs' form and reads; 7 does not.
  ExpectError(R"({"mappings":{"c":[["a",0,[2],"float",0,0,2]]}})",
              "mappings[\"c\"][0]: expected an array of 9 elements");
  ExpectError(R"({"mappings":{"c":[["a",0,[2],"float",0,0,3,[[0,2]],""]]}})",
              "[0][6]: total 3 is not the sum of the per-tile counts (2)");
  ExpectError(R"({"mappings":{"c":[["a",0,[2],"float",0,0,2,[[1,1],[1,1]],""]]}})",
              "[7][1]: tile 1 does not ascend");
  ExpectError(R"({"mappings":{"c":[["a",0,[2],"float",0,0,2,[[0,1,1]],""]]}})",
              "[7][0]: expected [tile, n]");
  ExpectError(R"({"mappings":{"c":[["a",0,[2],"float",2,0,2,[[0,2]],""]]}})",
              "[0][4]: expected 0 or 1");
  ExpectError(R"({"mappings":{"c":[["a",0,[-2],"float",0,0,2,[[0,2]],""]]}})",
              "[0][2]: expected a non-negative");
  ExpectError(R"({"mappings":{"c":[["a",0,[2],"float",0,0,2,[[4294967296,2]],""]]}})",
              "out of range");
  ExpectError(
      R"({"mappings":{"c":[["a",0,[],"float",0,0,0,[],""]],"d":[["a",0,[],"float",0,0,0,[],""]]}})",
      "mappings[\"d\"][0]: tensor a,0 appears twice");
}

TEST(InstructionInfoJson, WritesCompactlyAndRoundTrips) {
  InstructionInfo info{
      {{"dense/MatMul/dot.3", MlType::kInferenceFwd}, {"/convolution.1", MlType::kTrainingWu}}};
  std::string json = WriteInstructionInfoJson(info);
  EXPECT_EQ(json, R"({"ml_types":{"dense/MatMul/dot.3":1,"/convolution.1":4}})");
  Expected<InstructionInfo> read = ReadInstructionInfoJson(json, "i");
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, info);
  EXPECT_EQ(WriteInstructionInfoJson({}), R"({"ml_types":{}})");
}

TEST(InstructionInfoJson, RejectsValuesOutsideTheEnum) {
  Expected<InstructionInfo> read = ReadInstructionInfoJson(R"({"ml_types":{"x/y":5}})", "i.json");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message(), "i.json: ml_types[\"x/y\"]: 5 is not an MLType (0 to 4)");
  EXPECT_FALSE(ReadInstructionInfoJson(R"({"ml_types":[]})", "i"));
  EXPECT_EQ(MlTypeName(MlType::kTrainingBwd), "TRAINING_BWD");
}

TEST(TensorMapJson, InvalidUtf8NamesStillGiveValidJson) {
  TensorMap map;
  map.computations.push_back(
      {"c\xff", {{"a\xfe", 0, {1}, "float", false, false, 1, {{0, 1}}, ""}}});
  std::string json = WriteTensorMapJson(map);
  EXPECT_FALSE(nlohmann::json::parse(json, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace tileprof::report
