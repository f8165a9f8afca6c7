// One small inline module per feature of the HLO text grammar
// (../shared/spec/hlo-text.md sections 1-6), checked through the typed model
// (module.h, shape.h, literal.h, attributes.h) rather than by re-printing,
// so a feature that parses but lands in the wrong field fails here.
#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/hlo/attributes.h"
#include "engine/hlo/literal.h"
#include "engine/hlo/printer.h"
#include "tests/hlo/test_util.h"

namespace tileprof::hlo {
namespace {

using testing::MustParse;

// The instruction `name` in any computation; fails the test if absent.
const Instruction& Find(const Module& module, std::string_view name) {
  for (const Computation* computation : module.computations())
    if (const Instruction* found = computation->FindInstruction(name)) return *found;
  ADD_FAILURE() << "no instruction " << name;
  std::abort();
}

std::string Attr(const Instruction& instruction, std::string_view name) {
  const Attribute* attribute = instruction.FindAttribute(name);
  EXPECT_NE(attribute, nullptr) << name;
  return attribute ? std::string(attribute->value()) : std::string();
}

template <typename T>
T Must(Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << value.error().message();
    std::abort();
  }
  return std::move(*value);
}

Literal LiteralOf(const Module& module, std::string_view name) {
  const Instruction& constant = Find(module, name);
  return Must(ParseLiteral(constant.literal(), constant.shape()));
}

// ---- print styles -----------------------------------------------------------

// The same module in the three styles of spec section 1.
const char kLegacyLong[] = R"hlo(HloModule styles

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[4]) -> (f32[], f32[4], f32[4], f32[4], f32[4], /*index=5*/f32[4]) {
  %p = f32[4]{0} parameter(0)
  %zero = f32[] constant(0)
  %r = f32[] reduce(f32[4]{0} %p, f32[] %zero), dimensions={0}, to_apply=%sum
  ROOT %t = (f32[], f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, /*index=5*/f32[4]{0}) tuple(f32[] %r, f32[4]{0} %p, f32[4]{0} %p, f32[4]{0} %p, f32[4]{0} %p, /*index=5*/f32[4]{0} %p)
}
)hlo";

const char kShort[] = R"hlo(HloModule styles

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT add = f32[] add(x, y)
}

ENTRY main {
  p = f32[4]{0} parameter(0)
  zero = f32[] constant(0)
  r = f32[] reduce(p, zero), dimensions={0}, to_apply=sum
  ROOT t = (f32[], f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(r, p, p, p, p, p)
}
)hlo";

const char kLong[] = R"hlo(HloModule styles

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main (p: f32[4]) -> (f32[], f32[4], f32[4], f32[4], f32[4], /*index=5*/f32[4]) {
  %p = f32[4]{0} parameter(0)
  %zero = f32[] constant(0)
  %r = f32[] reduce(%p, %zero), dimensions={0}, to_apply=%sum
  ROOT %t = (f32[], f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, /*index=5*/f32[4]{0}) tuple(%r, %p, %p, %p, %p, /*index=5*/%p)
}
)hlo";

TEST(PrintStyles, AllThreeParseToTheSameModule) {
  Module legacy = MustParse(kLegacyLong), short_form = MustParse(kShort),
         long_form = MustParse(kLong);
  EXPECT_TRUE(legacy == short_form) << FindDifference(legacy, short_form).value_or("");
  EXPECT_TRUE(legacy == long_form) << FindDifference(legacy, long_form).value_or("");
  const Instruction& tuple = Find(legacy, "t");
  EXPECT_EQ(tuple.operand_count(), 6u);
  EXPECT_EQ(tuple.operand(5)->name(), "p");
  EXPECT_EQ(tuple.shape().tuple_shapes.size(), 6u);
  EXPECT_EQ(Find(legacy, "r").called_computations()[0], legacy.FindComputation("sum"));
}

TEST(PrintStyles, ProgramShapesAreKeptWhenWritten) {
  Module legacy = MustParse(kLegacyLong);
  const auto& signature = legacy.entry()->signature();
  ASSERT_TRUE(signature.has_value());
  ASSERT_EQ(signature->parameters.size(), 1u);
  EXPECT_EQ(signature->parameters[0].name, "p");
  EXPECT_EQ(ShapeToString(*signature->parameters[0].shape), "f32[4]");
  EXPECT_EQ(signature->result->tuple_shapes.size(), 6u);
  EXPECT_FALSE(MustParse(kShort).entry()->signature().has_value());
}

TEST(PrintStyles, LegacyOperandShapeMustMatchTheOperand) {
  std::string text = kLegacyLong;
  text.replace(text.find("f32[4]{0} %p, f32[] %zero"), 9, "f32[5]{0}");
  EXPECT_NE(testing::ParseError(text).find(
                "operand 'p' is declared as f32[5]{0} but defined as f32[4]{0}"),
            std::string::npos);
}

// ---- lexical ----------------------------------------------------------------

TEST(Lexical, CommentsAndLineBreaksInsideAnInstruction) {
  Module module = MustParse(R"hlo(// CHECK: leading FileCheck line
/* a banner
   over lines */
HloModule m  // trailing comment

ENTRY main {
  a = f32[2,
          3] parameter(0)  // the input
  ROOT b = f32[2,3]
      transpose(a),
      /* between attributes */ dimensions={1,
                                           0}
} // main
// -----
)hlo");
  const Instruction& b = Find(module, "b");
  EXPECT_EQ(b.opcode(), Opcode::kTranspose);
  EXPECT_EQ(Must(ParseIntList(Attr(b, "dimensions"))), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ShapeToString(Find(module, "a").shape()), "f32[2,3]");
}

TEST(Lexical, SplitMarkersSeparateModules) {
  Expected<std::vector<Module>> modules = ParseModules(
      "HloModule a\nENTRY e { ROOT x = f32[] parameter(0) }\n// -----\nHloModule b\nENTRY e { ROOT "
      "y = s32[] "
      "parameter(0) }\n");
  ASSERT_TRUE(modules.has_value()) << modules.error().message();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[1].name(), "b");
}

// ---- module -----------------------------------------------------------------

TEST(ModuleHeader, Attributes) {
  Module module = MustParse(
      R"hlo(HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {1}) }, buffer_donor={ (1, {0}) }, entry_computation_layout={(f32[2]{0}, (f32[3]{0}, s32[]))->(f32[2]{0}, f32[3]{0})}, replica_count=2, num_partitions=4, frontend_attributes={xla.sdy.sharding="{replicated}", _xla_compute_type="host"}

ENTRY main {
  p0 = f32[2]{0} parameter(0)
  p1 = (f32[3]{0}, s32[]) parameter(1)
  g = f32[3]{0} get-tuple-element(p1), index=0
  ROOT t = (f32[2]{0}, f32[3]{0}) tuple(p0, g)
}
)hlo");
  EXPECT_TRUE(module.is_scheduled());
  EXPECT_EQ(module.replica_count(), 2);
  EXPECT_EQ(module.num_partitions(), 4);
  ASSERT_TRUE(module.entry_computation_layout().has_value());
  const ProgramShape& layout = *module.entry_computation_layout();
  ASSERT_EQ(layout.parameters.size(), 2u);
  EXPECT_EQ(ShapeToString(layout.parameters[1]), "(f32[3]{0}, s32[])");
  EXPECT_EQ(ShapeToString(layout.result), "(f32[2]{0}, f32[3]{0})");

  auto aliases = Must(ParseInputOutputAlias(module.FindAttribute("input_output_alias")->value()));
  ASSERT_EQ(aliases.size(), 2u);
  EXPECT_EQ(aliases[0].output_index, (std::vector<int64_t>{0}));
  EXPECT_EQ(aliases[0].parameter, 0);
  EXPECT_EQ(aliases[0].kind, "must-alias");
  EXPECT_EQ(aliases[1].parameter_index, (std::vector<int64_t>{1}));
  EXPECT_EQ(aliases[1].kind, "");

  auto donors = Must(ParseBufferDonor(module.FindAttribute("buffer_donor")->value()));
  ASSERT_EQ(donors.size(), 1u);
  EXPECT_EQ(donors[0].parameter, 1);
  EXPECT_EQ(donors[0].parameter_index, (std::vector<int64_t>{0}));

  auto frontend =
      Must(ParseFrontendAttributes(module.FindAttribute("frontend_attributes")->value()));
  ASSERT_EQ(frontend.size(), 2u);
  EXPECT_EQ(frontend[0], (std::pair<std::string, std::string>{"xla.sdy.sharding", "{replicated}"}));
  EXPECT_EQ(frontend[1].second, "host");
}

TEST(ModuleHeader, DefaultsWhenAbsent) {
  Module module = MustParse("HloModule m\nENTRY e { ROOT x = f32[] parameter(0) }\n");
  EXPECT_FALSE(module.is_scheduled());
  EXPECT_EQ(module.replica_count(), 1);
  EXPECT_EQ(module.num_partitions(), 1);
  EXPECT_FALSE(module.entry_computation_layout().has_value());
}

TEST(ModuleStructure, NoEntryMeansLastComputationNoRootMeansLastInstruction) {
  Module module = MustParse(R"hlo(HloModule m
first {
  a = f32[] parameter(0)
  ROOT b = f32[] negate(a)
}
second {
  c = f32[] parameter(0)
  d = f32[] call(c), to_apply=first
  e = f32[] add(c, d)
}
)hlo");
  ASSERT_NE(module.entry(), nullptr);
  EXPECT_EQ(module.entry()->name(), "second");
  EXPECT_TRUE(module.entry()->is_entry());
  EXPECT_FALSE(module.FindComputation("first")->is_entry());
  EXPECT_EQ(module.entry()->root()->name(), "e");
  EXPECT_EQ(module.FindComputation("first")->root()->name(), "b");
}

TEST(ModuleStructure, EntryFirstAndForwardReferences) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=later
}
later {
  ROOT x = f32[] parameter(0)
}
)hlo");
  EXPECT_EQ(module.entry()->name(), "main");
  EXPECT_EQ(Find(module, "c").called_computations()[0]->name(), "later");
}

TEST(ModuleStructure, ExecutionThread) {
  Module module = MustParse(R"hlo(HloModule m
host_side {
  x = f32[2] parameter(0)
  ROOT y = f32[2] negate(x)
}, execution_thread="host"

ENTRY main {
  a = f32[2] parameter(0)
  ROOT c = f32[2] call(a), to_apply=host_side
}
)hlo");
  EXPECT_EQ(module.FindComputation("host_side")->execution_thread(), "host");
  EXPECT_EQ(module.entry()->execution_thread(), "");
}

// ---- shapes -----------------------------------------------------------------

TEST(Shapes, TuplesNestedAndEmpty) {
  Shape nested = Must(ParseShapeText("((f32[10]{0}), f32[20]{0}, s32[], ())"));
  ASSERT_TRUE(nested.IsTuple());
  ASSERT_EQ(nested.tuple_shapes.size(), 4u);
  EXPECT_TRUE(nested.tuple_shapes[0].IsTuple());
  EXPECT_EQ(nested.tuple_shapes[0].tuple_shapes[0].dimensions, (std::vector<int64_t>{10}));
  EXPECT_TRUE(nested.tuple_shapes[3].IsTuple());
  EXPECT_TRUE(nested.tuple_shapes[3].tuple_shapes.empty());
  EXPECT_EQ(nested.ByteSize(), 40 + 80 + 4);
}

TEST(Shapes, TokenAndDynamicDimensions) {
  EXPECT_TRUE(Must(ParseShapeText("token[]")).IsToken());
  Shape bounded = Must(ParseShapeText("f32[4,<=8]"));
  EXPECT_EQ(bounded.dimensions, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(bounded.dynamic_dimensions, (std::vector<bool>{false, true}));
  EXPECT_EQ(bounded.ElementCount(), 32);
  Shape unbounded = Must(ParseShapeText("f32[?,784]"));
  EXPECT_EQ(unbounded.dimensions[0], kUnboundedSize);
  EXPECT_TRUE(unbounded.dynamic_dimensions[0]);
  EXPECT_FALSE(unbounded.ElementCount().has_value());
}

TEST(Shapes, LayoutsWithTilesAndMemorySpace) {
  Shape tiled = Must(ParseShapeText("f32[2,3,4]{0,1,2:T(2,128)(2,1)S(1)}"));
  ASSERT_TRUE(tiled.has_layout);
  EXPECT_EQ(tiled.layout.minor_to_major, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(tiled.layout.tiles, (std::vector<std::vector<int64_t>>{{2, 128}, {2, 1}}));
  EXPECT_EQ(tiled.layout.memory_space, 1);
  EXPECT_EQ(Must(ParseShapeText("f32[4]{0:S(5)}")).layout.memory_space, 5);
  EXPECT_EQ(Must(ParseShapeText("s4[16]{0:E(4)}")).layout.element_size_in_bits, 4);
  EXPECT_FALSE(Must(ParseShapeText("f32[2,3]")).has_layout);
  // Old hand-written files put spaces in dimensions and layouts.
  EXPECT_EQ(Must(ParseShapeText("pred[2, 2]{1, 0}")), Must(ParseShapeText("pred[2,2]{1,0}")));
}

TEST(Shapes, InInstructions) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  tok = token[] after-all()
  p = (f32[2,<=4]{1,0}, (), s32[?]) parameter(0)
  ROOT g = f32[2,<=4]{1,0} get-tuple-element(p), index=0
}
)hlo");
  EXPECT_TRUE(Find(module, "tok").shape().IsToken());
  const Shape& p = Find(module, "p").shape();
  ASSERT_EQ(p.tuple_shapes.size(), 3u);
  EXPECT_TRUE(p.tuple_shapes[1].tuple_shapes.empty());
  EXPECT_EQ(p.tuple_shapes[2].dimensions[0], kUnboundedSize);
  EXPECT_EQ(Find(module, "g").shape().dynamic_dimensions, (std::vector<bool>{false, true}));
}

// ---- literals ---------------------------------------------------------------

const char kConstants[] = R"hlo(HloModule m
ENTRY main {
  nested = f32[2,3] constant({ { 1, 2.5, -3 }, {4e2, 5, 6} })
  specials = f32[5] constant({inf, -inf, nan, -nan, nan(0x7f)})
  flags = pred[2,2]{1,0} constant({{false, true}, {true, false}})
  complex = c64[2] constant({(1, 0), (0.5, -2)})
  scalar_complex = c64[] constant((1, -1))
  pair = (s32[], f32[2]) constant((1, {2, 3}))
  elided = bf16[56945,50]{1,0} constant({...})
  big = u64[] constant(18446744073709551615)
  ROOT t = () tuple()
}
)hlo";

TEST(Literals, NestedArrays) {
  Module module = MustParse(kConstants);
  Literal nested = LiteralOf(module, "nested");
  EXPECT_EQ(nested.kind, Literal::Kind::kArray);
  EXPECT_EQ(nested.dimensions, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(nested.reals, (std::vector<double>{1, 2.5, -3, 400, 5, 6}));
  EXPECT_EQ(LiteralOf(module, "flags").integers, (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(LiteralOf(module, "big").unsigneds, (std::vector<uint64_t>{18446744073709551615u}));
}

TEST(Literals, InfinitiesAndNaNs) {
  Module module = MustParse(kConstants);
  Literal specials = LiteralOf(module, "specials");
  ASSERT_EQ(specials.reals.size(), 5u);
  EXPECT_EQ(specials.reals[0], INFINITY);
  EXPECT_EQ(specials.reals[1], -INFINITY);
  EXPECT_TRUE(std::isnan(specials.reals[2]));
  EXPECT_TRUE(std::isnan(specials.reals[3]));
  EXPECT_TRUE(std::isnan(specials.reals[4]));
  // The payload survives: it prints back as written.
  EXPECT_NE(LiteralToString(specials).find("nan(0x7f)"), std::string::npos)
      << LiteralToString(specials);
}

TEST(Literals, ComplexTupleAndElided) {
  Module module = MustParse(kConstants);
  Literal complex = LiteralOf(module, "complex");
  EXPECT_EQ(complex.reals, (std::vector<double>{1, 0.5}));
  EXPECT_EQ(complex.imaginaries, (std::vector<double>{0, -2}));
  EXPECT_EQ(LiteralOf(module, "scalar_complex").imaginaries, (std::vector<double>{-1}));
  Literal pair = LiteralOf(module, "pair");
  ASSERT_EQ(pair.kind, Literal::Kind::kTuple);
  ASSERT_EQ(pair.elements.size(), 2u);
  EXPECT_EQ(pair.elements[0].integers, (std::vector<int64_t>{1}));
  EXPECT_EQ(pair.elements[1].reals, (std::vector<double>{2, 3}));
  Literal elided = LiteralOf(module, "elided");
  EXPECT_EQ(elided.kind, Literal::Kind::kElided);
  EXPECT_EQ(Find(module, "elided").literal(), "{...}");
}

TEST(Literals, ElementCountMustMatchTheShape) {
  EXPECT_FALSE(ParseLiteral("{1, 2}", Must(ParseShapeText("f32[3]"))).has_value());
  EXPECT_FALSE(ParseLiteral("300", Must(ParseShapeText("u8[]"))).has_value());
}

// ---- attributes -------------------------------------------------------------

TEST(Attributes, WindowAndDimLabels) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  in = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  ROOT c = f32[1,4,4,16] convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x0_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f
}
)hlo");
  const Instruction& c = Find(module, "c");
  auto window = Must(ParseWindow(Attr(c, "window")));
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0],
            (WindowDimension{.size = 3, .stride = 2, .padding_low = 1, .padding_high = 1}));
  EXPECT_EQ(
      window[1],
      (WindowDimension{
          .size = 3, .stride = 2, .padding_low = 0, .padding_high = 1, .window_dilation = 2}));
  ConvolutionDimensions labels = Must(ParseDimLabels(Attr(c, "dim_labels")));
  EXPECT_EQ(labels.input_batch, 0);
  EXPECT_EQ(labels.input_feature, 3);
  EXPECT_EQ(labels.input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(labels.kernel_input_feature, 2);
  EXPECT_EQ(labels.kernel_output_feature, 3);
  EXPECT_EQ(labels.output_spatial, (std::vector<int64_t>{1, 2}));
}

TEST(Attributes, SliceAndPadding) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  a = f32[10,25] parameter(0)
  s = f32[10,13] slice(a), slice={[0:10], [0:25:2]}
  z = f32[] constant(0)
  ROOT p = f32[10,28] pad(s, z), padding=0_0x1_2_1
}
)hlo");
  EXPECT_EQ(Must(ParseSlice(Attr(Find(module, "s"), "slice"))),
            (std::vector<SliceDimension>{{0, 10, 1}, {0, 25, 2}}));
  EXPECT_EQ(Must(ParsePadding(Attr(Find(module, "p"), "padding"))),
            (std::vector<PaddingDimension>{{0, 0, 0}, {1, 2, 1}}));
}

TEST(Attributes, ShardingForms) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  a = f32[4,4] parameter(0), sharding={replicated}
  b = f32[4,4] negate(a), sharding={maximal device=1}
  c = f32[4,4] negate(b), sharding={devices=[2,1]0,1}
  d = f32[4,4] negate(c), sharding={devices=[2,2]<=[4]}
  e = f32[4,4] negate(d), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  f = f32[4,4] negate(e), sharding={devices=[1,1,2]0,1 last_tile_dims={manual}}
  ROOT t = (f32[4,4], f32[4,4]) tuple(e, f), sharding={{replicated}, {manual}}
}
)hlo");
  auto sharding = [&](std::string_view name) {
    return Must(ParseSharding(Attr(Find(module, name), "sharding")));
  };
  EXPECT_EQ(sharding("a").kind, Sharding::Kind::kReplicated);
  EXPECT_EQ(sharding("b").kind, Sharding::Kind::kMaximal);
  EXPECT_EQ(sharding("b").device, 1);
  Sharding c = sharding("c");
  EXPECT_EQ(c.kind, Sharding::Kind::kTiled);
  EXPECT_EQ(c.tile_dimensions, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(c.devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Must(sharding("d").TileAssignment()), (std::vector<int64_t>{0, 1, 2, 3}));
  Sharding e = sharding("e");
  EXPECT_TRUE(e.iota);
  EXPECT_TRUE(e.last_tile_dim_replicate);
  EXPECT_EQ(Must(e.TileAssignment()), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(sharding("f").last_tile_dims, (std::vector<std::string>{"manual"}));
  Sharding t = sharding("t");
  ASSERT_EQ(t.kind, Sharding::Kind::kTuple);
  ASSERT_EQ(t.tuple_elements.size(), 2u);
  EXPECT_EQ(t.tuple_elements[1].kind, Sharding::Kind::kManual);
}

TEST(Attributes, ReplicaGroupsListAndIota) {
  Module module = MustParse(R"hlo(HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[8] parameter(0)
  l = f32[8] all-reduce(a), replica_groups={{0,1},{2,3}}, to_apply=sum
  i = f32[8] all-reduce(l), replica_groups=[2,2]<=[4], to_apply=sum
  ROOT t = f32[8] all-reduce(i), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=sum
}
)hlo");
  using Groups = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(Must(ParseReplicaGroups(Attr(Find(module, "l"), "replica_groups"))),
            (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(Must(ParseReplicaGroups(Attr(Find(module, "i"), "replica_groups"))),
            (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(Must(ParseReplicaGroups(Attr(Find(module, "t"), "replica_groups"))),
            (Groups{{0, 2}, {1, 3}}));
}

TEST(Attributes, MetadataKeepsUnknownKeys) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  ROOT a = f32[] parameter(0), metadata={op_type="Add" op_name="jit(f)/add" source_file="x.py" source_line=10 scheduling_name="a.1" deduplicated_name="fusion.3"}
}
)hlo");
  Metadata metadata = Must(ParseMetadata(Attr(Find(module, "a"), "metadata")));
  EXPECT_EQ(metadata.op_type, "Add");
  EXPECT_EQ(metadata.op_name, "jit(f)/add");
  EXPECT_EQ(metadata.source_file, "x.py");
  EXPECT_EQ(metadata.source_line, 10);
  ASSERT_NE(metadata.Find("scheduling_name"), nullptr);
  EXPECT_EQ(*metadata.Find("scheduling_name"), "\"a.1\"");
  EXPECT_EQ(metadata.entries.size(), 6u);
}

TEST(Attributes, BackendConfigQuotedAndBare) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  a = f32[2] parameter(0), backend_config="{\"flag\":true,\"n\":3}"
  b = f32[2] negate(a), backend_config={"operation_queue_id":"0","wait_on_operation_queues":[]}
  ROOT c = f32[2] negate(b), backend_config="p\005\000\001"
}
)hlo");
  BackendConfig quoted = Must(ParseBackendConfig(Attr(Find(module, "a"), "backend_config")));
  EXPECT_TRUE(quoted.quoted);
  ASSERT_NE(quoted.json, nullptr);
  EXPECT_EQ((*quoted.json)["n"], 3);
  BackendConfig bare = Must(ParseBackendConfig(Attr(Find(module, "b"), "backend_config")));
  EXPECT_FALSE(bare.quoted);
  ASSERT_NE(bare.json, nullptr);
  EXPECT_EQ((*bare.json)["operation_queue_id"], "0");
  BackendConfig binary = Must(ParseBackendConfig(Attr(Find(module, "c"), "backend_config")));
  EXPECT_EQ(binary.bytes, std::string("p\005\000\001", 4));
  EXPECT_EQ(binary.json, nullptr);
}

TEST(Attributes, ControlPredecessorsResolve) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  c = f32[] exponential(a), control-predecessors={b}
  ROOT d = f32[] add(b, c), control-predecessors={a, c}
}
)hlo");
  const Instruction& d = Find(module, "d");
  ASSERT_EQ(d.control_predecessors().size(), 2u);
  EXPECT_EQ(d.control_predecessors()[1], &Find(module, "c"));
  EXPECT_EQ(Find(module, "c").control_predecessors()[0], &Find(module, "b"));
}

TEST(Attributes, CalledComputations) {
  Module module = MustParse(R"hlo(HloModule m
cond {
  s = (s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT t = (s32[]) tuple(i)
}
b0 {
  ROOT x = s32[] parameter(0)
}
b1 {
  x = s32[] parameter(0)
  ROOT y = s32[] negate(x)
}
fused {
  x = s32[] parameter(0)
  ROOT y = s32[] abs(x)
}
ENTRY main {
  p = (s32[]) parameter(0)
  w = (s32[]) while(p), condition=cond, body=body
  i = s32[] get-tuple-element(w), index=0
  k = s32[] parameter(1)
  c = s32[] conditional(k, i, i), branch_computations={b0, b1}
  f = s32[] fusion(c), kind=kLoop, calls=fused
  ROOT r = s32[] call(f), to_apply=b1
}
)hlo");
  auto names = [&](std::string_view instruction) {
    std::vector<std::string_view> out;
    for (const Computation* callee : Find(module, instruction).called_computations())
      out.push_back(callee->name());
    return out;
  };
  EXPECT_EQ(names("w"), (std::vector<std::string_view>{"cond", "body"}));
  EXPECT_EQ(names("c"), (std::vector<std::string_view>{"b0", "b1"}));
  EXPECT_EQ(names("f"), (std::vector<std::string_view>{"fused"}));
  EXPECT_EQ(names("r"), (std::vector<std::string_view>{"b1"}));
  EXPECT_EQ(Find(module, "c").FindAttribute("branch_computations")->kind(),
            AttributeKind::kComputationList);
  EXPECT_EQ(Attr(Find(module, "f"), "kind"), "kLoop");
}

TEST(Attributes, CustomCallFields) {
  Module module = MustParse(R"hlo(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  ROOT c = (f32[2,3]{0,1}, s32[]) custom-call(a), custom_call_target="my\"target", api_version=API_VERSION_STATUS_RETURNING, custom_call_has_side_effect=true, operand_layout_constraints={f32[2,3]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, schedule=SCHEDULE_LATEST, backend_config={"k":1}
}
)hlo");
  CustomCall call = Must(GetCustomCall(Find(module, "c")));
  EXPECT_EQ(call.target, "my\"target");
  EXPECT_EQ(call.api_version, "API_VERSION_STATUS_RETURNING");
  EXPECT_TRUE(call.has_side_effect);
  EXPECT_EQ(call.schedule, "SCHEDULE_LATEST");
  ASSERT_EQ(call.operand_layout_constraints.size(), 1u);
  EXPECT_EQ(call.operand_layout_constraints[0].layout.minor_to_major, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(call.output_to_operand_aliasing.size(), 1u);
  EXPECT_EQ(call.output_to_operand_aliasing[0].output_index, (std::vector<int64_t>{0}));
  EXPECT_EQ(call.output_to_operand_aliasing[0].operand, 0);
  ASSERT_TRUE(call.backend_config.has_value());
  ASSERT_NE(call.backend_config->json, nullptr);
  EXPECT_EQ((*call.backend_config->json)["k"], 1);
}

TEST(Attributes, MalformedTypedValueIsLocated) {
  std::string error = testing::ParseError(
      "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding={devices=[2,2]0,1,2}\n}\n");
  EXPECT_EQ(error,
            "bad.hlo:3:42: error: invalid sharding=: tile dimensions need 4 devices, got 3\n"
            "  ROOT a = f32[] parameter(0), sharding={devices=[2,2]0,1,2}\n"
            "                                         ^");
}

}  // namespace
}  // namespace tileprof::hlo
