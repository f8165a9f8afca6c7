// Round trips through every structured format in a chain: each format holds
// everything the report structs carry, so a report read from text (or made
// by the engine) comes back equal after text -> JSON -> CBOR -> SQLite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "codec_fixtures.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_reader.h"
#include "reports/text_writer.h"

namespace tileprof::report {
namespace {

using testing::TextReportFiles;

// JSON -> CBOR -> SQLite -> structs, failing the test at the first step
// that errs.
ReportDocument ThroughEveryFormat(const ReportDocument& document, const std::string& name) {
  Expected<ReportDocument> from_json = ReadJsonReport(WriteJsonReport(document), name + ".json");
  EXPECT_TRUE(from_json.has_value()) << from_json.error().message();
  if (!from_json) return {};
  std::string cbor = WriteCborReport(*from_json);
  Expected<ReportDocument> from_cbor =
      ReadCborReport({reinterpret_cast<const uint8_t*>(cbor.data()), cbor.size()}, name + ".cbor");
  EXPECT_TRUE(from_cbor.has_value()) << from_cbor.error().message();
  if (!from_cbor) return {};
  std::string db = (std::filesystem::temp_directory_path() /
                    ("tileprof-cross-" + std::to_string(::getpid()) + ".db"))
                       .string();
  Status written = WriteProfileDatabase(db, *from_cbor);
  EXPECT_TRUE(written.has_value()) << written.error().message();
  Expected<ReportDocument> from_db = ReadProfileDatabase(db);
  std::filesystem::remove(db);
  EXPECT_TRUE(from_db.has_value()) << from_db.error().message();
  return from_db ? std::move(from_db).value() : ReportDocument{};
}

TEST(CrossFormat, TextReportsSurviveJsonCborAndSqlite) {
  ASSERT_GE(TextReportFiles().size(), 5u);
  for (const std::filesystem::path& file : TextReportFiles()) {
    SCOPED_TRACE(file.string());
    Expected<std::string> text = ReadFile(file.string());
    ASSERT_TRUE(text.has_value());
    Expected<ParsedTextReport> parsed = ReadTextReport(*text, file.filename().string());
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
    ReportDocument document = testing::DocumentOf(*parsed);
    ReportDocument back = ThroughEveryFormat(document, file.stem().string());
    EXPECT_EQ(back, document);
    // And the text written from the far end is the text written from the start.
    TextReportOptions options;
    options.show_execution_steps = true;
    const ExecutionReport* execution = back.execution ? &*back.execution : nullptr;
    EXPECT_EQ(WriteTextReport(*back.compilation, execution, options),
              WriteTextReport(parsed->compilation,
                              parsed->execution ? &*parsed->execution : nullptr, options));
  }
}

TEST(CrossFormat, EngineReportsSurviveJsonCborAndSqlite) {
  const ReportDocument documents[] = {
      testing::FullDocument(),
      testing::EngineDocument(testing::AdderMk1Report(), testing::SampleExecution()),
      testing::EngineDocument(testing::ImbalancedMk1Report()),
      testing::EngineDocument(testing::SmallCompilation(), testing::SmallExecution()),
  };
  int i = 0;
  for (const ReportDocument& document : documents) {
    SCOPED_TRACE(i++);
    EXPECT_EQ(ThroughEveryFormat(document, "engine"), document);
  }
}

}  // namespace
}  // namespace tileprof::report
