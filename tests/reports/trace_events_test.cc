// Trace events: the wire format is checked against protoc decoding our bytes
// with the spec's schema (tests/reports/ipu_trace_event.proto), the stream
// framing against truncation, and the text dump against the spec's layout.
#include "reports/trace_events.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file.h"

namespace tileprof::report {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tileprof_trace_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::vector<TraceEvent> SampleEvents() {
  TraceEvent begin{.timestamp = 1588587072.25,
                   .ordinal = 0,
                   .type = TraceEventType::kCompileBegin,
                   .module_name = "cluster_1"};
  TraceEvent end{.timestamp = 1588587074.5,
                 .ordinal = 1,
                 .type = TraceEventType::kCompileEnd,
                 .module_name = "cluster_1",
                 .duration_us = 1834012,
                 .compilation_report = "Target:\n  Number of IPUs:         1\n",
                 .tensor_map = R"({"mappings": {}})",
                 .instruction_info = "{}"};
  TraceEvent h2d{.timestamp = 1588587075,
                 .ordinal = 0,
                 .type = TraceEventType::kHostToDeviceTransfer,
                 .data_transfer = DataTransferJson({{"input.1", 3136}, {"label", 4}})};
  TraceEvent load{.timestamp = 1588587075,
                  .ordinal = -1,
                  .type = TraceEventType::kLoadEngine,
                  .module_name = "cluster_1"};
  TraceEvent exec{.timestamp = 1588587076,
                  .ordinal = 0,
                  .type = TraceEventType::kExecute,
                  .module_name = "cluster_1",
                  .execution_report = "Execution:\n"};
  TraceEvent empty_begin{.type = TraceEventType::kCompileBegin};
  return {begin, end, h2d, load, exec, empty_begin};
}

// protoc --decode of one message, or "" when protoc is not installed.
std::string ProtocDecode(const std::string& message) {
  if (std::system("command -v protoc >/dev/null 2>&1") != 0) return "";
  std::string in = TempPath("event.bin"), out = TempPath("event.txt");
  EXPECT_TRUE(WriteFileAtomic(in, message));
  std::string dir = std::string(TILEPROF_SOURCE_DIR) + "/tests/reports";
  std::string command = "protoc --proto_path=" + dir + " --decode=tensorflow.IpuTraceEvent " + dir +
                        "/ipu_trace_event.proto < " + in + " > " + out + " 2>&1";
  int status = std::system(command.c_str());
  std::string text = ReadFile(out).value();
  EXPECT_EQ(status, 0) << text;
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  return text;
}

TEST(TraceEvents, ProtocReadsWhatWeWrite) {
  std::vector<TraceEvent> events = SampleEvents();
  std::string end = ProtocDecode(EncodeTraceEvent(events[1]));
  if (end.empty()) GTEST_SKIP() << "protoc is not installed (scripts/setup installs it)";
  EXPECT_EQ(end,
            "timestamp: 1588587074.5\n"
            "ordinal: 1\n"
            "type: COMPILE_END\n"
            "compile_end {\n"
            "  compilation_report: \"Target:\\n  Number of IPUs:         1\\n\"\n"
            "  duration: 1834012\n"
            "  module_name: \"cluster_1\"\n"
            "  tensor_map: \"{\\\"mappings\\\": {}}\"\n"
            "  instruction_info: \"{}\"\n"
            "}\n");
  // proto3 leaves out zero fields, but a set oneof member is always there.
  EXPECT_EQ(ProtocDecode(EncodeTraceEvent(events[5])), "compile_begin {\n}\n");
  EXPECT_THAT(
      ProtocDecode(EncodeTraceEvent(events[3])),
      HasSubstr(
          "ordinal: -1\ntype: LOAD_ENGINE\nload_engine {\n  module_name: \"cluster_1\"\n}\n"));
  EXPECT_THAT(ProtocDecode(EncodeTraceEvent(events[2])),
              HasSubstr("data_transfer {\n  data_transfer: \""));
}

TEST(TraceEvents, StreamRoundTrips) {
  std::vector<TraceEvent> events = SampleEvents();
  auto stream = DecodeTraceEventStream(EncodeTraceEventStream(events));
  ASSERT_TRUE(stream) << stream.error().message();
  EXPECT_EQ(stream->events, events);
  EXPECT_TRUE(stream->truncated.empty());
}

TEST(TraceEvents, TruncatedStreamKeepsTheWholeEvents) {
  std::string bytes = EncodeTraceEventStream(SampleEvents());
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    auto stream = DecodeTraceEventStream(std::string_view(bytes).substr(0, cut));
    ASSERT_TRUE(stream) << cut << ": " << stream.error().message();
    EXPECT_LE(stream->events.size(), SampleEvents().size());
  }
  auto cut = DecodeTraceEventStream(std::string_view(bytes).substr(0, bytes.size() - 1));
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->events.size(), 5u);
  EXPECT_THAT(cut->truncated, HasSubstr("event 5 at byte"));
}

TEST(TraceEvents, MalformedMessagesNameThePlace) {
  // type = 9: not in the enum.
  auto bad_type = DecodeTraceEvent(std::string("\x18\x09", 2));
  ASSERT_FALSE(bad_type);
  EXPECT_THAT(bad_type.error().message(), HasSubstr("unknown event type 9"));
  // A COMPILE_END envelope (type 1) holding a load_engine payload (field 8).
  auto mismatch = DecodeTraceEvent(std::string("\x18\x01\x42\x00", 4));
  ASSERT_FALSE(mismatch);
  EXPECT_THAT(mismatch.error().message(), HasSubstr("COMPILE_END event carries payload field 8"));
  // A length running past the end inside the payload.
  auto overrun = DecodeTraceEvent(std::string("\x18\x01\x32\x02\x0a\x09", 6));
  ASSERT_FALSE(overrun);
  EXPECT_THAT(overrun.error().message(), HasSubstr("runs past the end"));
  // Unknown fields are skipped, as protobuf readers do.
  auto unknown = DecodeTraceEvent(std::string("\x58\x01\x2a\x00", 4));
  ASSERT_TRUE(unknown) << unknown.error().message();
  EXPECT_EQ(unknown->type, TraceEventType::kCompileBegin);
}

TEST(TraceEvents, TextDumpFollowsExtractAllStrings) {
  setenv("TZ", "UTC", 1);
  tzset();
  std::vector<TraceEvent> events = SampleEvents();
  std::string text = EventsToText({events[0], events[1], events[3]});
  std::string rule(70, '-');
  EXPECT_EQ(text,
            rule + "\n=> @ 2020-05-04 10:11:12 +0000: Compile begin: cluster_1\n\n" + rule +
                "\n=> @ 2020-05-04 10:11:14 +0000: Compile end: cluster_1\nDuration: 1834012 us\n"
                "Target:\n  Number of IPUs:         1\n\n" +
                rule + "\n=> @ 2020-05-04 10:11:15 +0000: Load engine: cluster_1\n\n");
}

TEST(TraceEvents, DataTransferJsonHasJsoncppsLayout) {
  EXPECT_EQ(DataTransferJson({{"in\"1", 8}}),
            "{\n\t\"tensors\" : \n\t[\n\t\t{\n\t\t\t\"name\" : \"in\\\"1\",\n\t\t\t\"size\" : "
            "8\n\t\t}\n\t],\n"
            "\t\"total_size\" : 8\n}");
  EXPECT_EQ(DataTransferJson({}), "{\n\t\"tensors\" : [],\n\t\"total_size\" : 0\n}");
}

TEST(TraceEventWriter, AppendsIncrementallyAndRenamesOnClose) {
  std::string path = TempPath("events.pb");
  std::vector<TraceEvent> events = SampleEvents();
  {
    auto writer = TraceEventWriter::Open(path);
    ASSERT_TRUE(writer) << writer.error().message();
    ASSERT_TRUE(writer->Append(events[0]));
    ASSERT_TRUE(writer->Append(events[1]));
    // Before Close the events are already on disk in the .partial file.
    auto partial = DecodeTraceEventStream(ReadFile(path + ".partial").value());
    ASSERT_TRUE(partial);
    EXPECT_EQ(partial->events.size(), 2u);
    EXPECT_FALSE(std::filesystem::exists(path));
    ASSERT_TRUE(writer->Close());
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  auto done = DecodeTraceEventStream(ReadFile(path).value());
  ASSERT_TRUE(done);
  EXPECT_EQ(done->events, std::vector<TraceEvent>(events.begin(), events.begin() + 2));
  std::filesystem::remove(path);
  EXPECT_FALSE(TraceEventWriter::Open("/nonexistent-dir/x.pb"));
}

}  // namespace
}  // namespace tileprof::report
