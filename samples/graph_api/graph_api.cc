// graph_api_sample: the graph of seed 003's listing 4.2 built with tileprof's
// graph API. Two variables of four floats, v1 and v2; a constant c1 copied
// into v1; one compute set with a SumVertex per tile, vertex i summing
// v1[i..4) into v2[i]; each element of v1 and v2 on the tile of its vertex.
// The program copies c1 to v1 and executes the compute set.
//
// For now the sample builds the graph, validates it and the program, and
// prints their statistics (the compiler and simulator come later).
//
//   graph_api_sample [--target ipu1|ipu2|ipu21] [--ipus N] [--tiles-per-ipu N]
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "common/format.h"
#include "engine/codelets/codelets.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"

namespace {

using namespace tileprof;
using namespace tileprof::engine;

// The listing's numTiles: v1 has one element per tile.
constexpr uint32_t kNumTiles = 4;

struct SeedGraph {
  Graph graph;
  program::Sequence program;
};

Expected<SeedGraph> BuildSeedGraph(const Target& target) {
  if (target.NumTiles() < kNumTiles) {
    return MakeError("the listing needs {} tiles, the target has {}", kNumTiles, target.NumTiles());
  }
  SeedGraph seed{Graph(target), {}};
  Graph& graph = seed.graph;
  TILEPROF_ASSIGN_OR_RETURN(Tensor v1, graph.AddVariable(ElementType::kF32, {kNumTiles}, "v1"));
  TILEPROF_ASSIGN_OR_RETURN(Tensor v2, graph.AddVariable(ElementType::kF32, {kNumTiles}, "v2"));
  const double initial[kNumTiles] = {1.0, 1.5, 2.0, 2.5};
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor c1, graph.AddConstantFromDoubles(ElementType::kF32, {kNumTiles}, initial, "c1"));
  TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(c1, 0));

  // prog.add(Copy(c1, v1));
  seed.program.Add(program::Copy(c1, v1));

  ComputeSetId compute_set = graph.AddComputeSet("computeSet");
  for (uint32_t i = 0; i < kNumTiles; ++i) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor v1_i, v1.Index(i));
    TILEPROF_ASSIGN_OR_RETURN(Tensor v2_i, v2.Index(i));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(v1_i, i));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(v2_i, i));

    TILEPROF_ASSIGN_OR_RETURN(VertexRef vtx, graph.AddVertex(compute_set, "SumVertex"));
    TILEPROF_ASSIGN_OR_RETURN(Tensor tail, v1.Slice(i, kNumTiles));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vtx["in"], tail));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vtx["out"], v2_i));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vtx, i));
    TILEPROF_RETURN_IF_ERROR(graph.SetPerfEstimate(vtx, 20));
  }
  seed.program.Add(program::Execute(compute_set));

  TILEPROF_RETURN_IF_ERROR(graph.Validate());
  TILEPROF_RETURN_IF_ERROR(program::ValidateProgram(graph, seed.program));
  return seed;
}

// "  Label:<padding>value", the label left-justified in 24 columns as the
// text report's Target section does (text-report.md §3).
void Line(std::string_view label, std::string_view value) {
  fmt::print("  {:<24}{}\n", fmt::format("{}:", label), value);
}

void Print(const SeedGraph& seed) {
  const Graph& graph = seed.graph;
  const Target& target = graph.target();
  fmt::print("Target:\n");
  Line("Architecture", target.ArchString());
  Line("Number of IPUs", WithThousands(uint64_t{target.NumIpus()}));
  Line("Tiles per IPU", WithThousands(uint64_t{target.TilesPerIpu()}));
  Line("Total Tiles", WithThousands(uint64_t{target.NumTiles()}));
  Line("Memory Per-Tile", BinarySize(target.BytesPerTile()));
  Line("Total Memory", BinarySize(target.TotalMemory()));
  Line("Clock Speed (approx)", fmt::format("{} MHz", WithThousands(target.ClockHz() / 1e6, 1)));

  const GraphStats stats = graph.Stats();
  fmt::print("\nGraph:\n");
  Line("Number of vertices", WithThousands(stats.num_vertices));
  Line("Number of edges", WithThousands(stats.num_edges));
  Line("Number of variables", WithThousands(stats.num_variables));
  Line("Number of constants", WithThousands(stats.num_constants));
  Line("Number of compute sets", WithThousands(stats.num_compute_sets));
  Line("Tiles used", WithThousands(stats.tiles_used));
  Line("Variable data", fmt::format("{} B", WithThousands(stats.variable_bytes)));
  Line("Constant data", fmt::format("{} B", WithThousands(stats.constant_bytes)));
  Line("Vertex state",
       fmt::format("{} B ({} B edge pointers)",
                   WithThousands(stats.edge_pointer_bytes + stats.internal_state_bytes),
                   WithThousands(stats.edge_pointer_bytes)));
  Line("Vertex code", fmt::format("{} B", WithThousands(stats.vertex_code_bytes)));

  fmt::print("\nVertices by type:\n");
  for (const CodeletUsage& usage : stats.by_codelet) {
    fmt::print("  {:<40} {:>6} vertices {:>6} edges {:>8} B state, on {} tiles\n",
               usage.codelet->name(), usage.vertices, usage.edges, usage.state_bytes, usage.tiles);
  }

  fmt::print("\nBy tile:\n");
  for (const TileUsage& tile : graph.TileUsages()) {
    fmt::print("  tile {:>5} (IPU {}): {} vertices, {} edges, {} B data, {} B vertex state\n",
               tile.tile, target.IpuOfTile(tile.tile), tile.vertices, tile.edges, tile.data_bytes,
               tile.vertex_state_bytes);
  }

  fmt::print("\nVertices:\n");
  for (VertexId id = 0; id < graph.num_vertices(); ++id) {
    const VertexInfo& vertex = graph.vertex(id);
    const std::span<const FieldView> fields = graph.fields(id);
    const FieldView& in = fields[0];
    fmt::print(
        "  {} on tile {}: sums v1[{}..{}) into v2[{}], {} cycles (perf estimate; "
        "the codelet's own estimate is {})\n",
        graph.DescribeVertex(id), *vertex.tile, in.regions().front().begin,
        in.regions().front().end, fields[1].regions().front().begin, graph.VertexCycles(id),
        vertex.codelet->EstimateCycles({graph.FieldElements(id), graph.ParamValues(id)}, target));
  }

  const program::ProgramStats program_stats = program::CountSteps(seed.program);
  fmt::print("\nProgram: {} steps ({} copy, {} execute), valid\n", program_stats.steps,
             program_stats.by_kind[static_cast<size_t>(program::ProgramKind::kCopy)],
             program_stats.by_kind[static_cast<size_t>(program::ProgramKind::kExecute)]);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Builds seed 003's graph (listing 4.2) with the tileprof graph API"};
  TargetOptions options;
  options.preset = "ipu1";
  uint32_t tiles_per_ipu = 0;
  app.add_option("--target", options.preset, "ipu1, ipu2 or ipu21")->capture_default_str();
  app.add_option("--ipus", options.num_ipus, "number of IPUs")->capture_default_str();
  app.add_option("--tiles-per-ipu", tiles_per_ipu,
                 "tiles per IPU (the IPU Model's --ipu_model_tiles; default: all)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (tiles_per_ipu != 0) options.tiles_per_ipu = tiles_per_ipu;

  auto target = Target::Create(options);
  if (!target) {
    fmt::print(stderr, "graph_api_sample: {}\n", target.error().message());
    return 2;
  }
  auto seed = BuildSeedGraph(*target);
  if (!seed) {
    fmt::print(stderr, "graph_api_sample: {}\n", seed.error().message());
    return 1;
  }
  Print(*seed);
  return 0;
}
