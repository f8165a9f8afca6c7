// `tileprof run --elided-constants`: a module reading a constant printed as
// {...} is refused by default, naming the constant; zeros and random fill
// it, with a warning per constant; random values depend on --seed only; a
// cached executable fills exactly as a fresh compile. The module is
// tests/cli/data/elided_constants.hlo.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/npy.h"
#include "tests/cli_run.h"

namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;
namespace npy = tileprof::npy;

std::string Module() {
  return std::string(TILEPROF_SOURCE_DIR) + "/tests/cli/data/elided_constants.hlo";
}

// IEEE binary16 (finite values: the test's are in [-1, 1]).
double HalfToDouble(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const double magnitude = exponent == 0 ? std::ldexp(bits & 0x3ff, -24)
                                         : std::ldexp((bits & 0x3ff) | 0x400, exponent - 25);
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class RunElidedCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tileprof_run_elided_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    npy::Array x{npy::Dtype::kF4, {4}, std::vector<std::byte>(16)};
    std::memcpy(x.data.data(), kX, sizeof kX);
    ASSERT_TRUE(npy::WriteFile(Path("x.npy"), x).has_value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs the module with x = kX, results in `outputs`.
  CliRun Run(const std::string& flags, const std::string& outputs) const {
    return Tileprof("run " + Module() +
                    " --tiles-per-ipu 8 --progress=false --input x=" + Path("x.npy") +
                    " --outputs " + Path(outputs) + " -o " + Path("r.rep") + " " + flags);
  }

  // Output `i` of a run into `outputs`, as doubles.
  std::vector<double> Read(const std::string& outputs, int i) const {
    auto array = npy::ReadFile(Path(outputs + "/out." + std::to_string(i) + ".npy"));
    if (!array) {
      ADD_FAILURE() << array.error().message();
      return {};
    }
    std::vector<double> values;
    const size_t size = npy::ItemSize(array->dtype);
    for (size_t at = 0; at + size <= array->data.size(); at += size) {
      const std::byte* p = array->data.data() + at;
      values.push_back(Element(array->dtype, p));
    }
    return values;
  }

  std::string Bytes(const std::string& outputs, int i) const {
    std::ifstream in(Path(outputs + "/out." + std::to_string(i) + ".npy"), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static double Element(npy::Dtype dtype, const std::byte* p) {
    switch (dtype) {
      case npy::Dtype::kF4: {
        float v;
        std::memcpy(&v, p, 4);
        return v;
      }
      case npy::Dtype::kF2: {
        uint16_t bits;
        std::memcpy(&bits, p, 2);
        return HalfToDouble(bits);
      }
      case npy::Dtype::kI4: {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
      }
      case npy::Dtype::kBool:
        return std::to_integer<int>(*p);
      default:
        ADD_FAILURE() << "unexpected dtype " << npy::Name(dtype);
        return 0;
    }
  }

  static constexpr float kX[4] = {1, 2, 3, 4};
  std::filesystem::path dir_;
};

TEST_F(RunElidedCli, RefusedByDefaultNamingTheConstant) {
  CliRun run = Run("", "o");
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("tileprof: run: cannot run: "));
  EXPECT_THAT(run.out, HasSubstr("w (constant): its values are unknown (elided as {...}"));
  EXPECT_THAT(run.out, HasSubstr("--elided-constants=zeros or random fills them"));
  EXPECT_THAT(run.out, Not(HasSubstr("Ran elided_constants")));
  EXPECT_FALSE(std::filesystem::exists(Path("o")));
  // As the explicit default.
  EXPECT_EQ(Run("--elided-constants=error", "o").status, 1);
  CliRun bad = Run("--elided-constants=ones", "o");
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.out, HasSubstr("--elided-constants"));
}

TEST_F(RunElidedCli, ZerosGiveZerosWithAWarningPerConstant) {
  CliRun run = Run("--elided-constants=zeros", "o");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(Read("o", 0), Each(0.0));                // x * 0 + 0
  EXPECT_THAT(Read("o", 1), ElementsAre(1, 2, 3, 4));  // x + 0
  EXPECT_THAT(Read("o", 2), Each(0.0));
  EXPECT_THAT(Read("o", 3), Each(0.0));
  EXPECT_THAT(Read("o", 4), Each(0.0));
  // One warning per constant, bias too though its computation is called twice.
  const std::string tail =
      " is elided ({...}) in the HLO text: filled with zeros "
      "(--elided-constants=zeros)";
  EXPECT_EQ(Count(run.out, tail), 5) << run.out;
  for (const char* constant :
       {"'w' f32[4]", "'bias' f32[4]", "'counts' s32[2,3]", "'mask' pred[5]", "'half' f16[3]"})
    EXPECT_EQ(Count(run.out, std::string("constant ") + constant + tail), 1) << constant;
  EXPECT_THAT(run.out, HasSubstr("Ran elided_constants"));
}

TEST_F(RunElidedCli, RandomIsSensibleAndDeterministicForASeed) {
  CliRun run = Run("--elided-constants=random --seed 5", "a");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(Count(run.out, "filled with random values of seed 5 (--elided-constants=random)"), 5);
  // Both calls add the same bias; w is then (first - bias) / x.
  const std::vector<double> first = Read("a", 0), second = Read("a", 1);
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(second.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const double bias = second[i] - kX[i];
    const double w = (first[i] - bias) / kX[i];
    EXPECT_TRUE(bias >= -1 && bias < 1) << bias;
    EXPECT_TRUE(w >= -1.001 && w < 1.001) << w;
  }
  for (double doubled : Read("a", 2))
    EXPECT_TRUE(doubled >= 0 && doubled <= 18 && std::fmod(doubled, 2) == 0) << doubled;
  for (double mask : Read("a", 3)) EXPECT_TRUE(mask == 0 || mask == 1) << mask;
  for (double half : Read("a", 4)) EXPECT_TRUE(half > -1 && half <= 1) << half;

  ASSERT_EQ(Run("--elided-constants=random --seed 5", "b").status, 0);
  ASSERT_EQ(Run("--elided-constants=random --seed 6", "c").status, 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Bytes("a", i), Bytes("b", i)) << "out." << i;
  EXPECT_NE(Bytes("a", 0), Bytes("c", 0));
}

// The fill is made at run time: one cached executable serves every choice,
// and a cache hit refuses, fills with zeros or with a seed's values exactly
// as a fresh compile does.
TEST_F(RunElidedCli, ACachedExecutableFillsAsAFreshCompile) {
  const std::string cache = " --executable-cache-path " + Path("cache");
  CliRun miss = Run(cache, "o");
  EXPECT_EQ(miss.status, 1);
  CliRun hit = Run(cache, "o");
  EXPECT_EQ(hit.status, 1);
  EXPECT_THAT(hit.out, HasSubstr("w (constant): its values are unknown"));
  int executables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(Path("cache")))
    executables += entry.path().extension() == ".poplar_exec";
  EXPECT_EQ(executables, 1);

  ASSERT_EQ(Run("--elided-constants=random --seed 5", "fresh").status, 0);
  CliRun cached = Run("--elided-constants=random --seed 5" + cache, "cached");
  ASSERT_EQ(cached.status, 0) << cached.out;
  EXPECT_THAT(cached.out, HasSubstr("filled with random values of seed 5"));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Bytes("fresh", i), Bytes("cached", i)) << "out." << i;
  ASSERT_EQ(Run("--elided-constants=zeros" + cache, "zeros").status, 0);
  EXPECT_THAT(Read("zeros", 0), Each(0.0));
}

// module_0101 is refused only for its elided constant and runs once it is
// filled; xla_tests_fuzz_rand_000035's constant has values, of a type the
// engine has no arithmetic for (c64, as its parameter), and the module does
// not run whatever the fill.
TEST_F(RunElidedCli, CorpusModules) {
  const std::string corpus = std::string(TILEPROF_SHARED_DIR) + "/corpus/hlo/";
  const std::string flags = " --tiles-per-ipu 16 --progress=false -o " + Path("r.rep");
  const std::string accuracy = corpus + "module_0101.jit_accuracy.49.before_optimizations.txt";
  CliRun refused = Tileprof("run " + accuracy + flags);
  EXPECT_EQ(refused.status, 1);
  EXPECT_THAT(refused.out, HasSubstr("constant.26 (constant): its values are unknown"));
  CliRun filled =
      Tileprof("run " + accuracy + flags + " --elided-constants=random --outputs " + Path("out"));
  EXPECT_EQ(filled.status, 0) << filled.out;
  EXPECT_THAT(filled.out, HasSubstr("constant 'constant.26' f32[34,34] is elided ({...})"));

  const std::string complex = corpus + "xla_tests_fuzz_rand_000035.hlo";
  CliRun still = Tileprof("run " + complex + flags + " --elided-constants=zeros");
  EXPECT_EQ(still.status, 1);
  EXPECT_THAT(still.out, HasSubstr("the host cannot feed or read c64 arrays"));
  EXPECT_THAT(still.out, Not(HasSubstr("filled with")));
}

}  // namespace
