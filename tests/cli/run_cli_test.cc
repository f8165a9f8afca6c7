// `tileprof run` end to end: inputs from .npy files, outputs written as
// .npy, the report's Execution section, input_output_alias across
// --iterations, errors for mismatched inputs and unexecutable ops, thread
// count independence and the log lines.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/npy.h"
#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;
namespace npy = tileprof::npy;

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tileprof_run_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::string WriteText(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }

  std::string WriteFloats(const std::string& name, std::vector<uint64_t> shape,
                          std::vector<float> values) const {
    npy::Array array{npy::Dtype::kF4, std::move(shape), std::vector<std::byte>(values.size() * 4)};
    std::memcpy(array.data.data(), values.data(), array.data.size());
    EXPECT_TRUE(npy::WriteFile(Path(name), array).has_value());
    return Path(name);
  }

  static std::vector<float> ReadFloats(const std::string& path) {
    auto array = npy::ReadFile(path);
    if (!array) {
      ADD_FAILURE() << array.error().message();
      return {};
    }
    EXPECT_EQ(array->dtype, npy::Dtype::kF4);
    std::vector<float> values(array->data.size() / 4);
    std::memcpy(values.data(), array->data.data(), array->data.size());
    return values;
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // A small target keeps the per-tile seed vertices cheap.
  static constexpr const char* kSmall = " --tiles-per-ipu 8 --progress=false";

  std::filesystem::path dir_;
};

std::string Adder() { return std::string(TILEPROF_SOURCE_DIR) + "/samples/adder.hlo"; }

TEST_F(RunCli, AdderFromNpyInputsToNpyOutputsAndReport) {
  const std::string a = WriteFloats("a.npy", {2}, {1, 2});
  const std::string b = WriteFloats("b.npy", {2}, {10, 20});
  const std::string c = WriteFloats("c.npy", {2}, {100, 200});
  // An --input before MODEL takes one value, not MODEL too.
  CliRun run = Tileprof("run --input a=" + a + " " + Adder() + kSmall + " --input 1=" + b +
                        " --input c=" + c + " --outputs " + Path("out") + " -o " +
                        Path("report.rep") + " --show-execution-steps");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(ReadFloats(Path("out/out.0.npy")), ::testing::ElementsAre(112.0f, 224.0f));
  EXPECT_THAT(run.out, HasSubstr("Ran adder on ipu2"));
  EXPECT_THAT(run.out, HasSubstr("  Wrote:    " + Path("report.rep")));
  const std::string report = ReadFile(Path("report.rep"));
  EXPECT_THAT(report,
              HasSubstr("\nExecution:\n\nPrograms executed:\n\n<anonymous>.\n\n  Total cycles:"));
  EXPECT_THAT(
      report,
      HasSubstr(" microseconds)\n  Tile average compute cycles (including idle threads): "));
  EXPECT_THAT(report, HasSubstr("  Tile average host exchange cycles:"));
  EXPECT_THAT(report, HasSubstr("  Cycles by vertex type:\n    "));
  EXPECT_THAT(report,
              HasSubstr("popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>"));
  EXPECT_THAT(report, HasSubstr("  Execution steps:\n    Host to device: seed"));
  EXPECT_THAT(report, HasSubstr("    Device to host: out.0"));
  // The memory sections come first, as in `tileprof compile`'s report.
  EXPECT_LT(report.find("Memory Usage:"), report.find("Execution:"));
}

TEST_F(RunCli, InputMismatchesNameTheParameterAndBothShapes) {
  const std::string wrong_shape = WriteFloats("a3.npy", {3}, {1, 2, 3});
  CliRun run =
      Tileprof("run " + Adder() + kSmall + " --input a=" + wrong_shape + " -o " + Path("r.rep"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("tileprof: run: input 'a': " + wrong_shape +
                                 " is float32[3], the parameter is f32[2]"));

  npy::Array ints{npy::Dtype::kI4, {2}, std::vector<std::byte>(8)};
  ASSERT_TRUE(npy::WriteFile(Path("i.npy"), ints).has_value());
  run =
      Tileprof("run " + Adder() + kSmall + " --input b=" + Path("i.npy") + " -o " + Path("r.rep"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out,
              HasSubstr("input 'b': " + Path("i.npy") + " is int32[2], the parameter is f32[2]"));

  run =
      Tileprof("run " + Adder() + kSmall + " --input nope=" + wrong_shape + " -o " + Path("r.rep"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("no parameter 'nope'; the parameters are: a (0), b (1), c (2)"));

  const std::string junk = WriteText("junk.npy", "not an array");
  run = Tileprof("run " + Adder() + kSmall + " --input a=" + junk + " -o " + Path("r.rep"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr(junk + ": not a .npy file"));
  EXPECT_FALSE(std::filesystem::exists(Path("r.rep")));
}

TEST_F(RunCli, RefusesUnexecutableOpsBeforeRunning) {
  const std::string model = WriteText("opaque.hlo", R"(HloModule opaque
ENTRY main {
  x = f32[4] parameter(0)
  mystery = f32[4] custom-call(x), custom_call_target="SomethingUnknown"
  ROOT y = f32[4] add(mystery, x)
}
)");
  CliRun run = Tileprof("run " + model + kSmall + " -o " + Path("r.rep"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("tileprof: run: cannot run: 1 instruction(s) cannot be executed"));
  EXPECT_THAT(
      run.out,
      HasSubstr(
          "mystery (custom-call SomethingUnknown): tileprof::OpaqueOp<custom-call,float,float>"));
  EXPECT_THAT(run.out, Not(HasSubstr("execution 1")));
}

// A training-step shape: the loss is printed every execution, and the
// aliased weights carry over, so it falls: w <- w - 0.5 (w - x), loss =
// sum((w - x)^2), from w = 0 and x = 1: 2, 0.5, 0.125.
TEST_F(RunCli, AliasedOutputsFeedTheNextExecution) {
  const std::string model =
      WriteText("step.hlo", R"(HloModule step, input_output_alias={ {1}: (0, {}, may-alias) }
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  w = f32[2] parameter(0)
  x = f32[2] parameter(1)
  d = f32[2] subtract(w, x)
  sq = f32[2] multiply(d, d)
  zero = f32[] constant(0)
  loss = f32[] reduce(sq, zero), dimensions={0}, to_apply=add
  half = f32[2] constant({0.5, 0.5})
  step = f32[2] multiply(d, half)
  w1 = f32[2] subtract(w, step)
  ROOT out = (f32[], f32[2]) tuple(loss, w1)
}
)");
  const std::string x = WriteFloats("x.npy", {2}, {1, 1});
  CliRun run = Tileprof("run " + model + kSmall + " --iterations 3 --input x=" + x + " --outputs " +
                        Path("o") + " -o " + Path("r.rep"));
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("execution 1: out.0 (loss) = 2\n"));
  EXPECT_THAT(run.out, HasSubstr("execution 2: out.0 (loss) = 0.5\n"));
  EXPECT_THAT(run.out, HasSubstr("execution 3: out.0 (loss) = 0.125\n"));
  EXPECT_THAT(ReadFloats(Path("o/out.1.npy")), ::testing::ElementsAre(0.875f, 0.875f));
  EXPECT_THAT(ReadFloats(Path("o/out.0.npy")), ::testing::ElementsAre(0.125f));
}

TEST_F(RunCli, ThreadCountDoesNotChangeResults) {
  const std::string model = WriteText("dot.hlo", R"(HloModule dot
ENTRY main {
  x = f32[32,48] parameter(0)
  w = f32[48,24] parameter(1)
  h = f32[32,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[32,24] tanh(h)
}
)");
  std::string outputs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string dir = Path("t" + std::to_string(i));
    CliRun run =
        Tileprof("run " + model + kSmall + " --inputs random --seed 7 --threads " +
                 std::string(i == 0 ? "1" : "4") + " --outputs " + dir + " -o " + Path("r.rep"));
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_THAT(run.out, HasSubstr(i == 0 ? "on 1 host thread(s)" : "on 4 host thread(s)"));
    outputs[i] = ReadFile(dir + "/out.0.npy");
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_GT(outputs[0].size(), 32u * 24 * 4);
}

TEST_F(RunCli, LogsTheDeviceAndCompileLines) {
  setenv("TF_POPLAR_VLOG_LEVEL", "1", 1);
  CliRun run = Tileprof("run " + Adder() + kSmall + " -o " + Path("r.rep"));
  unsetenv("TF_POPLAR_VLOG_LEVEL");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("] Device /device:IPU:0 attached to IPU: 0\n"));
  EXPECT_THAT(run.out, HasSubstr("] Begin XLA compilation: adder"));
  EXPECT_THAT(run.out, HasSubstr("] End XLA compilation: adder"));
  // Without logging asked for, only the results and the summary.
  CliRun quiet = Tileprof("run " + Adder() + kSmall + " -o " + Path("r.rep"));
  EXPECT_THAT(quiet.out, Not(HasSubstr("attached")));
}

}  // namespace
