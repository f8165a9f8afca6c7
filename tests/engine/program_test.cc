// Program structure and validation against a graph.
#include "engine/graph/program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::engine::program {
namespace {

using ::testing::HasSubstr;
constexpr ElementType kF32 = ElementType::kF32;

std::string Message(const Status& status) {
  return status ? std::string("ok") : status.error().message();
}

struct Fixture {
  Graph graph{*Target::FromPreset("ipu2", 1, 4)};
  Tensor v1 = *graph.AddVariable(kF32, {4}, "v1");
  Tensor v2 = *graph.AddVariable(kF32, {4}, "v2");
  Tensor c1 = *graph.AddConstantFromDoubles(kF32, {4}, std::vector<double>{1, 2, 3, 4}, "c1");
  Tensor flag = *graph.AddVariable(ElementType::kPred, {}, "flag");
  ComputeSetId cs = graph.AddComputeSet("cs");
  DataStream in = *graph.AddHostToDeviceFifo("in", kF32, 4);
  DataStream out = *graph.AddDeviceToHostFifo("out", kF32, 4);
};

TEST(Program, SeedProgramValidates) {
  Fixture f;
  Sequence prog;
  prog.Add(Copy(f.c1, f.v1));
  prog.Add(Execute(f.cs));
  EXPECT_TRUE(ValidateProgram(f.graph, prog)) << Message(ValidateProgram(f.graph, prog));
  EXPECT_EQ(prog.kind(), ProgramKind::kSequence);
  ASSERT_EQ(prog.steps().size(), 2u);
  EXPECT_EQ(prog.steps()[0].kind(), ProgramKind::kCopy);
  EXPECT_EQ(prog.steps()[0].source().regions()[0].variable, 2u);
  EXPECT_EQ(prog.steps()[1].compute_set(), f.cs);
}

TEST(Program, AllKindsNestAndCount) {
  Fixture f;
  Sequence body{Execute(f.cs), Copy(f.v1, f.v2)};
  Sequence prog{Copy(f.in, f.v1), Repeat(10, body), RepeatWhileTrue(Sequence(), f.flag, body),
                If(f.flag, Execute(f.cs)), Copy(f.v2, f.out)};
  ASSERT_TRUE(ValidateProgram(f.graph, prog)) << Message(ValidateProgram(f.graph, prog));
  const auto steps = prog.steps();
  EXPECT_EQ(steps[0].kind(), ProgramKind::kCopyFromStream);
  EXPECT_EQ(steps[0].stream().id, f.in.id);
  EXPECT_EQ(steps[1].count(), 10u);
  EXPECT_EQ(steps[1].body().id(), body.id());  // shared, not copied
  EXPECT_EQ(steps[2].condition().kind(), ProgramKind::kSequence);
  EXPECT_EQ(steps[3].then_body().kind(), ProgramKind::kExecute);
  EXPECT_EQ(steps[3].else_body().steps().size(), 0u);
  EXPECT_EQ(steps[4].kind(), ProgramKind::kCopyToStream);

  const ProgramStats stats = CountSteps(prog);
  // prog, 5 steps, body twice (3 nodes each), the empty condition, the If's
  // Execute and empty else.
  EXPECT_EQ(stats.steps, 1u + 5u + 3u + 3u + 1u + 2u);
  EXPECT_EQ(stats.by_kind[static_cast<size_t>(ProgramKind::kExecute)], 3u);
  EXPECT_EQ(stats.by_kind[static_cast<size_t>(ProgramKind::kSequence)], 5u);
  EXPECT_EQ(stats.max_depth, 4u);  // prog > Repeat > body > Execute
  EXPECT_EQ(KindName(ProgramKind::kRepeatWhileTrue), "RepeatWhileTrue");
}

TEST(Program, CopyErrorsNameTheStep) {
  Fixture f;
  Tensor half = *f.graph.AddVariable(ElementType::kF16, {4}, "h");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Sequence{Execute(f.cs), Copy(f.v1, f.c1)})),
            "program[1] (Copy): destination includes constant 2 'c1' (f32[4])");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(f.v1, half))),
            "program (Copy): source f32[4] and destination f16[4] differ in type or size");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(*f.v1.Slice(0, 3), f.v2))),
            "program (Copy): source f32[3] and destination f32[4] differ in type or size");
  const Tensor twice[] = {*f.v2.Slice(0, 2), *f.v2.Slice(0, 2)};
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(f.v1, *Tensor::Concat(twice)))),
            "program (Copy): destination repeats elements");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Repeat(2, Sequence{Copy(Tensor(), f.v2)}))),
            "program.body[0] (Copy): source: invalid tensor");
}

TEST(Program, ExecuteNeedsAComputeSet) {
  Fixture f;
  EXPECT_EQ(Message(ValidateProgram(f.graph, If(f.flag, Sequence(), Execute(7)))),
            "program.else (Execute): no compute set 7 (graph has 1)");
}

TEST(Program, PredicatesAreScalarPredOrInteger) {
  Fixture f;
  EXPECT_EQ(Message(ValidateProgram(f.graph, If(f.v1, Sequence()))),
            "program (If): predicate f32[4] must be one pred or integer element");
  EXPECT_THAT(Message(ValidateProgram(f.graph, If(*f.v1.Index(0), Sequence()))),
              HasSubstr("predicate f32[] must be one pred or integer element"));
  Tensor count = *f.graph.AddVariable(ElementType::kS32, {1}, "count");
  EXPECT_TRUE(ValidateProgram(f.graph, RepeatWhileTrue(Sequence(), count, Sequence())));
}

TEST(Program, StreamsMustMatchDirectionTypeAndSize) {
  Fixture f;
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(f.out, f.v1))),
            "program (CopyFromStream): stream 'out' is device-to-host, used as a source");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(f.v1, f.in))),
            "program (CopyToStream): stream 'in' is host-to-device, used as a destination");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(f.in, *f.v1.Slice(0, 2)))),
            "program (CopyFromStream): stream 'in' carries f32[4], the tensor is f32[2]");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(f.in, f.c1))),
            "program (CopyFromStream): destination includes constant 2 'c1' (f32[4])");
  EXPECT_EQ(Message(ValidateProgram(f.graph, Copy(DataStream{9}, f.v1))),
            "program (CopyFromStream): no stream 9 (graph has 2)");
}

TEST(Program, ASequenceMustNotContainItself) {
  Fixture f;
  Sequence loop;
  loop.Add(Execute(f.cs));
  loop.Add(Repeat(3, loop));
  EXPECT_EQ(Message(ValidateProgram(f.graph, loop)),
            "program[1].body (Sequence): the program contains itself");
  loop.Clear();  // breaks the reference cycle
}

TEST(Program, SharedSubProgramsAreNotCycles) {
  Fixture f;
  Sequence shared{Execute(f.cs)};
  Sequence prog{shared, shared, If(f.flag, shared, shared)};
  EXPECT_TRUE(ValidateProgram(f.graph, prog)) << Message(ValidateProgram(f.graph, prog));
}

}  // namespace
}  // namespace tileprof::engine::program
