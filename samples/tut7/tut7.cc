// tut7_sample: the matrix-vector product of Graphcore's Poplar tutorial 7
// (tutorials/poplar/tut7_matrix_vector_opt), built with tileprof's graph API
// and run on the simulator, to hold tileprof's cycle model against the
// Execution summaries the tutorial published (../shared/corpus/published
// A07-A10; samples/tut7/README.md has the comparison).
//
// The program is the tutorial's, re-expressed with tileprof's API: each
// matrix row is cut into `split` segments (the split the tutorial's own
// estimate prefers), a DotProductVertex per (row, segment) writes a partial
// sum on the tile of its matrix slice, then a ReduceVertex per row adds the
// row's partials. Vertices, matrix slices and partials are spread evenly over
// the tiles in (segment, row) order; the input vector is spread element by
// element; each output element sits with its ReduceVertex. Inputs are the
// tutorial's (in[c] = c, matrix[r][c] = r * c), streamed from the host.
//
//   tut7_sample ROWS COLS [--device model-ipu1|model-ipu2|ipu] [--steps]
//
// The devices are the tutorial's. On an IPU Model (the default, as in the
// tutorial) every vertex carries the perf estimate the tutorial sets (5
// cycles of overhead plus 2 multiply-adds or additions per cycle), which is
// what the model reports, and host transfers go at the IPU Model's link
// rate. `ipu` is Mk2 hardware: perf estimates are not used (the codelets'
// own cost, a scalar C++ loop as the tutorial's vertices compile to) and the
// host link runs at its measured rate.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "engine/sim/cycle_model.h"
#include "engine/sim/simulator.h"
#include "reports/text_writer.h"

namespace {

using namespace tileprof;
using namespace tileprof::engine;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The tutorial's estimate of a split: the busiest tile's dot products (its
// vertices rounded up to a whole round of the worker contexts), the vector
// segments it receives, then the same for the reduction. Worker-cycle
// figures, as the tutorial prints them.
struct SplitCost {
  uint64_t compute = 0, exchange = 0, reduce_compute = 0, reduce_exchange = 0;
  uint64_t Total() const { return compute + exchange + reduce_compute + reduce_exchange; }
};

SplitCost EstimateSplit(const Target& target, uint64_t rows, uint64_t cols, uint64_t split) {
  const uint64_t tiles = target.NumTiles(), workers = target.NumWorkerContexts();
  const uint64_t bytes_per_cycle = sim::kExchangeBytesPerCycle;
  SplitCost cost;
  const uint64_t per_tile = std::max<uint64_t>(CeilDiv(rows * split, tiles), 1);
  const uint64_t segment = CeilDiv(cols, split);
  cost.compute = CeilDiv(per_tile, workers) * workers * (5 + (segment + 1) / 2);
  cost.exchange = CeilDiv(per_tile, rows) * segment * sizeof(float) / bytes_per_cycle;
  const uint64_t reduce_per_tile = std::max<uint64_t>(CeilDiv(rows, tiles), 1);
  cost.reduce_compute = CeilDiv(reduce_per_tile, workers) * workers * (5 + (split + 1) / 2);
  cost.reduce_exchange = reduce_per_tile * split * sizeof(float) / bytes_per_cycle;
  return cost;
}

uint64_t BestSplit(const Target& target, uint64_t rows, uint64_t cols) {
  uint64_t best = 1, best_cost = std::numeric_limits<uint64_t>::max();
  for (uint64_t split = 1; split < cols; ++split) {
    const uint64_t cost = EstimateSplit(target, rows, cols, split).Total();
    if (cost < best_cost) best = split, best_cost = cost;
  }
  return best;
}

struct Tut7 {
  Graph graph;
  program::Sequence program;
};

// The dot products of segment [begin, end) of every row, vertex k of
// `split * rows` on tile k * tiles / (split * rows).
Status AddDotProducts(Graph& graph, ComputeSetId cs, const Tensor& matrix, const Tensor& in,
                      const Tensor& partials, uint64_t split, bool estimates) {
  const uint64_t rows = matrix.shape()[0], cols = matrix.shape()[1];
  const uint64_t tiles = graph.target().NumTiles();
  for (uint64_t i = 0; i < split; ++i) {
    const uint64_t begin = i * cols / split, end = (i + 1) * cols / split;
    if (begin == end) continue;
    TILEPROF_ASSIGN_OR_RETURN(Tensor segment, in.Slice(begin, end));
    for (uint64_t row = 0; row < rows; ++row) {
      const auto tile = static_cast<uint32_t>((i * rows + row) * tiles / (split * rows));
      TILEPROF_ASSIGN_OR_RETURN(Tensor matrix_row, matrix.Index(row));
      TILEPROF_ASSIGN_OR_RETURN(Tensor slice, matrix_row.Slice(begin, end));
      TILEPROF_ASSIGN_OR_RETURN(Tensor partial_row, partials.Index(row));
      TILEPROF_ASSIGN_OR_RETURN(Tensor partial, partial_row.Index(i));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef v, graph.AddVertex(cs, "DotProductVertex"));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(v["a"], slice));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(v["b"], segment));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(v["out"], partial));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(v, tile));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(slice, tile));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(partial, tile));
      if (estimates) TILEPROF_RETURN_IF_ERROR(graph.SetPerfEstimate(v, 5 + (end - begin + 1) / 2));
    }
  }
  return {};
}

// A ReduceVertex per row, with its output element, on row * tiles / rows.
Status AddReductions(Graph& graph, ComputeSetId cs, const Tensor& partials, const Tensor& out,
                     bool estimates) {
  const uint64_t rows = partials.shape()[0], split = partials.shape()[1];
  const uint64_t tiles = graph.target().NumTiles();
  for (uint64_t row = 0; row < rows; ++row) {
    const auto tile = static_cast<uint32_t>(row * tiles / rows);
    TILEPROF_ASSIGN_OR_RETURN(Tensor partial_row, partials.Index(row));
    TILEPROF_ASSIGN_OR_RETURN(Tensor element, out.Index(row));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef v, graph.AddVertex(cs, "ReduceVertex"));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(v["in"], partial_row));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(v["out"], element));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(v, tile));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(element, tile));
    if (estimates) TILEPROF_RETURN_IF_ERROR(graph.SetPerfEstimate(v, 5 + (split + 1) / 2));
  }
  return {};
}

Expected<Tut7> Build(const Target& target, uint64_t rows, uint64_t cols, uint64_t split,
                     bool estimates) {
  Tut7 t{Graph(target), {}};
  Graph& graph = t.graph;
  constexpr ElementType kF32 = ElementType::kF32;
  TILEPROF_ASSIGN_OR_RETURN(Tensor matrix, graph.AddVariable(kF32, {rows, cols}, "matrix"));
  TILEPROF_ASSIGN_OR_RETURN(Tensor in, graph.AddVariable(kF32, {cols}, "inputVector"));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, graph.AddVariable(kF32, {rows}, "outputVector"));
  TILEPROF_ASSIGN_OR_RETURN(Tensor partials, graph.AddVariable(kF32, {rows, split}, "partials"));
  const uint64_t tiles = target.NumTiles();
  for (uint64_t c = 0; c < cols; ++c) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor element, in.Index(c));
    TILEPROF_RETURN_IF_ERROR(
        graph.SetTileMapping(element, static_cast<uint32_t>(c * tiles / cols)));
  }
  const ComputeSetId mul = graph.AddComputeSet("mulCS");
  TILEPROF_RETURN_IF_ERROR(AddDotProducts(graph, mul, matrix, in, partials, split, estimates));
  const ComputeSetId reduce = graph.AddComputeSet("reduceCS");
  TILEPROF_RETURN_IF_ERROR(AddReductions(graph, reduce, partials, out, estimates));

  TILEPROF_ASSIGN_OR_RETURN(DataStream in_stream,
                            graph.AddHostToDeviceFifo("inputVector", kF32, cols));
  TILEPROF_ASSIGN_OR_RETURN(DataStream matrix_stream,
                            graph.AddHostToDeviceFifo("inputMatrix", kF32, rows * cols));
  TILEPROF_ASSIGN_OR_RETURN(DataStream out_stream, graph.AddDeviceToHostFifo("out", kF32, rows));
  t.program.Add(program::Copy(in_stream, in));
  t.program.Add(program::Copy(matrix_stream, matrix));
  t.program.Add(program::Execute(mul));
  t.program.Add(program::Execute(reduce));
  t.program.Add(program::Copy(out, out_stream));
  TILEPROF_RETURN_IF_ERROR(graph.Validate());
  TILEPROF_RETURN_IF_ERROR(program::ValidateProgram(graph, t.program));
  return t;
}

template <typename T>
std::vector<std::byte> AsBytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The tutorial's check: every output within 1e-5 relative error of the sum.
Status Check(const std::vector<std::byte>& bytes, uint64_t rows, uint64_t cols) {
  if (bytes.size() != rows * sizeof(float))
    return MakeError("the output has {} bytes", bytes.size());
  for (uint64_t r = 0; r < rows; ++r) {
    float got;
    std::memcpy(&got, bytes.data() + r * sizeof(float), sizeof(float));
    float want = 0;
    for (uint64_t c = 0; c < cols; ++c) want += static_cast<float>(r * c) * static_cast<float>(c);
    if (std::fabs(1 - want / got) > 1e-5) {
      return MakeError("output {}: expected={}, actual={}", r, want, got);
    }
  }
  return {};
}

Status Run(const Target& target, uint64_t rows, uint64_t cols, bool hardware, bool steps) {
  const sim::SimOptions sim_options{.ipu_model = !hardware};
  const uint64_t split = BestSplit(target, rows, cols);
  const SplitCost cost = EstimateSplit(target, rows, cols, split);
  fmt::print("Multiplying matrix of size {}x{} by vector of size {} on {} ({})\n", rows, cols, cols,
             target.ArchString(), hardware ? "hardware" : "IPU Model");
  fmt::print(
      "Best split chosen:\ncolsAxisSplit={}, total cost={} (compute cost={}, exchange cost={}, "
      "reduce exchange cost={}, reduce compute cost={})\n",
      split, cost.Total(), cost.compute, cost.exchange, cost.reduce_exchange, cost.reduce_compute);
  TILEPROF_ASSIGN_OR_RETURN(Tut7 t, Build(target, rows, cols, split, !hardware));
  TILEPROF_ASSIGN_OR_RETURN(auto sim, sim::Simulator::Create(t.graph, t.program, {}, sim_options));
  std::vector<float> vector(cols), matrix(rows * cols);
  for (uint64_t c = 0; c < cols; ++c) {
    vector[c] = static_cast<float>(c);
    for (uint64_t r = 0; r < rows; ++r) matrix[r * cols + c] = static_cast<float>(r * c);
  }
  TILEPROF_ASSIGN_OR_RETURN(sim::RunResult run, sim->Run({{"inputVector", AsBytes(vector)},
                                                          {"inputMatrix", AsBytes(matrix)}}));
  TILEPROF_RETURN_IF_ERROR(Check(run.outputs["out"], rows, cols));
  fmt::print("Multiplication result OK\n\n");
  report::TextReportOptions options;
  options.show_execution_steps = steps;
  for (const std::string& line : report::ExecutionLines(sim->Report(), options)) {
    fmt::print("{}\n", line);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Poplar tutorial 7's matrix-vector product on tileprof's simulator"};
  uint64_t rows = 0, cols = 0;
  std::string device = "model-ipu2";
  bool steps = false;
  app.add_option("rows", rows, "matrix rows")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  app.add_option("cols", cols, "matrix columns (and vector size)")
      ->required()
      ->check(CLI::Range(uint64_t{2}, uint64_t{1} << 20));
  app.add_option("--device", device,
                 "model-ipu1 or model-ipu2 (an IPU Model: the tutorial's perf estimates and the "
                 "model's host link), or ipu (Mk2 hardware: codelet costs, the measured link)")
      ->check(CLI::IsMember({"model-ipu1", "model-ipu2", "ipu"}))
      ->capture_default_str();
  app.add_flag("--steps", steps, "list the execution steps (showExecutionSteps)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (rows * cols > (uint64_t{1} << 28)) {
    fmt::print(stderr, "tut7_sample: {}x{} is more than 2^28 matrix elements\n", rows, cols);
    return 2;
  }
  const bool hardware = device == "ipu";
  auto target = Target::FromPreset(device == "model-ipu1" ? "ipu1" : "ipu2");
  if (!target) {
    fmt::print(stderr, "tut7_sample: {}\n", target.error().message());
    return 2;
  }
  if (Status status = Run(*target, rows, cols, hardware, steps); !status) {
    fmt::print(stderr, "tut7_sample: {}\n", status.error().message());
    return 1;
  }
  return 0;
}
