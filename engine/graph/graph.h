// Graph: the public graph API of the engine, in the spirit of the Poplar
// programming model that seed 003 describes (listing 4.2): variables and
// constants (tensors), compute sets, vertices (instances of codelets) whose
// fields are connected to tensors by edges, tile mapping of both data and
// vertices, host data streams, and programs (program.h) that run compute
// sets, copy data and loop. The compiler builds a Graph from HLO; the
// simulator and the memory model read it back through the accessors below.
//
//   Graph graph(target);
//   Tensor v1 = *graph.AddVariable(ElementType::kF32, {4}, "v1");
//   ComputeSetId cs = graph.AddComputeSet("computeSet");
//   VertexRef vtx = *graph.AddVertex(cs, "SumVertex");
//   graph.Connect(vtx["in"], *v1.Slice(i, 4));
//   graph.SetTileMapping(vtx, i);
//
// Errors are values: mutators return Status / Expected and leave the graph
// unchanged on error; messages name the vertex (id, debug name, codelet), the
// field, the variable or the tile. Validate() checks what can only be checked
// once the graph is complete (every element and vertex mapped, every field
// connected, sizes consistent, no conflicting writes).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "engine/codelets/codelet.h"
#include "engine/graph/chunk_ahead.h"
#include "engine/graph/region_list.h"
#include "engine/graph/stable_vector.h"
#include "engine/graph/tensor.h"
#include "engine/graph/tile_map.h"
#include "engine/target/target.h"

namespace tileprof::engine {

using ComputeSetId = uint32_t;
using VertexId = uint32_t;
using StreamId = uint32_t;

// A field of a vertex, by name: `vtx["in"]`. The name is resolved when the
// reference is used, so a misspelt field is reported with the vertex.
struct FieldRef {
  VertexId vertex = 0;
  std::string field;
};

struct VertexRef {
  VertexId id = 0;
  FieldRef operator[](std::string_view field) const { return {id, std::string(field)}; }
};

enum class StreamDirection : uint8_t { kHostToDevice, kDeviceToHost };

// A host data stream (FIFO); each copy moves num_elements elements.
struct DataStream {
  StreamId id = 0;
};

struct VariableInfo {
  std::string name;
  ElementType type = ElementType::kF32;
  std::vector<uint64_t> shape;
  uint64_t num_elements = 0;
  bool is_constant = false;
  std::vector<std::byte> constant_data;  // constants: num_elements encoded elements
};

struct ComputeSetInfo {
  std::string name;
  std::vector<VertexId> vertices;  // in creation order
};

// A vertex field: the elements it is connected to, as the graph keeps them.
// The shape and regions live in arenas shared by every field of the graph
// (FieldArena, below): a compile makes millions of fields, and a Tensor
// each, with its own shape and region vectors, was three allocations per
// edge that stayed live to the end, and cache misses for every walk over
// the graph. Views stay valid as long as the graph, also across a move.
class FieldView {
 public:
  // False until Graph::Connect succeeds; an unconnected view is empty.
  bool connected() const { return connected_; }
  ElementType element_type() const { return type_; }
  // A flat field's one dimension is its element count, held in the view
  // itself (the span then views this FieldView, which the graph keeps in
  // place): most fields are flat, and an arena slot each was 4 M of them.
  std::span<const uint64_t> shape() const { return {rank_ == 1 ? &elements_ : dims_, rank_}; }
  RegionRange regions() const { return {{runs_, num_runs_}, num_regions_}; }
  uint64_t NumElements() const { return elements_; }
  uint64_t NumBytes() const { return elements_ * SizeOf(type_); }
  // "f32[4,2]" (HLO style shape).
  std::string ShapeString() const;

 private:
  friend class Graph;
  const StridedRegion* runs_ = nullptr;
  const uint64_t* dims_ = nullptr;
  uint64_t elements_ = 0;
  uint32_t num_regions_ = 0;
  uint32_t num_runs_ = 0;
  uint8_t rank_ = 0;
  ElementType type_ = ElementType::kF32;
  bool connected_ = false;
};

struct VertexInfo {
  const Codelet* codelet = nullptr;
  // Held by the graph once per distinct name: the vertices of one op share
  // it (a compile makes millions of vertices from thousands of names).
  std::string_view debug_name;
  // The vertex's fields and parameters, one per codelet field or parameter,
  // in storage the graph owns: read them through Graph::fields and
  // Graph::params. (Arena slots, not vectors the graph grows: copying and
  // faulting in millions of slots at each doubling was 3% of a compile.)
  FieldView* fields = nullptr;
  std::optional<uint32_t>* params = nullptr;
  std::optional<uint32_t> tile;
  ComputeSetId compute_set = 0;
  uint32_t num_edges = 0;

  // Edges: one per connected field (the report's "Number of edges").
  uint32_t NumEdges() const { return num_edges; }
};

struct StreamInfo {
  std::string name;
  ElementType type = ElementType::kF32;
  uint64_t num_elements = 0;
  StreamDirection direction = StreamDirection::kHostToDevice;
};

// A piece of a tensor region that lies on one tile (or on none yet).
struct MappedRegion {
  TensorRegion region;
  std::optional<uint32_t> tile;
};

// Per codelet type: how much of the graph it accounts for.
struct CodeletUsage {
  const Codelet* codelet = nullptr;
  uint64_t vertices = 0;
  uint64_t edges = 0;
  uint64_t state_bytes = 0;  // vertices * codelet state bytes
  uint64_t tiles = 0;        // tiles running at least one of them
};

struct GraphStats {
  uint64_t num_variables = 0;  // constants excluded
  uint64_t num_constants = 0;
  uint64_t variable_bytes = 0;
  uint64_t constant_bytes = 0;
  uint64_t num_compute_sets = 0;
  uint64_t num_vertices = 0;
  uint64_t num_edges = 0;
  uint64_t num_streams = 0;
  uint64_t edge_pointer_bytes = 0;       // summed over vertices
  uint64_t internal_state_bytes = 0;     // summed over vertices
  uint64_t vertex_code_bytes = 0;        // once per codelet type per tile
  uint64_t tiles_used = 0;               // tiles holding data or vertices
  std::vector<CodeletUsage> by_codelet;  // most state bytes first, then by name
};

// What one tile holds (raw sizes; the memory model adds layout and overheads).
struct TileUsage {
  uint32_t tile = 0;
  uint64_t vertices = 0;
  uint64_t edges = 0;
  uint64_t data_bytes = 0;  // variable and constant elements mapped here
  uint64_t vertex_state_bytes = 0;
  uint64_t vertex_code_bytes = 0;  // once per codelet type on the tile
};

// Storage for many small arrays that never move once allocated: chunks
// of kChunk elements, each handed out from the front; an array larger
// than a quarter chunk gets a block of its own.
template <typename T>
class FieldArena {
 public:
  std::span<T> Allocate(size_t count) {
    if (count > kChunk / 4) {
      blocks_.push_back(std::make_unique_for_overwrite<T[]>(count));
      return {blocks_.back().get(), count};
    }
    if (chunks_.empty() || used_ + count > kChunk) {
      chunks_.push_back(ahead_.Next());
      used_ = 0;
    }
    T* start = chunks_.back().get() + used_;
    used_ += count;
    return {start, count};
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 16;
  ChunkAhead<T, kChunk> ahead_;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t used_ = 0;
};

class Graph {
 public:
  explicit Graph(Target target);
  // Vertices view names the graph holds; a copy would view the original's.
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  const Target& target() const { return target_; }

  // ---- Data --------------------------------------------------------------
  // A variable of `shape` (may have zero elements). Error on element-count
  // overflow.
  Expected<Tensor> AddVariable(ElementType type, std::vector<uint64_t> shape,
                               std::string_view name);
  // A constant holding `data`: the encoded elements (SizeOf(type) bytes each,
  // see element_type.h). Error if the size does not match the shape.
  Expected<Tensor> AddConstant(ElementType type, std::vector<uint64_t> shape,
                               std::vector<std::byte> data, std::string_view name);
  // A constant from doubles or int64s, converted with XLA convert semantics.
  Expected<Tensor> AddConstantFromDoubles(ElementType type, std::vector<uint64_t> shape,
                                          std::span<const double> values, std::string_view name);
  Expected<Tensor> AddConstantFromInts(ElementType type, std::vector<uint64_t> shape,
                                       std::span<const int64_t> values, std::string_view name);
  // Maps every element of `tensor` to `tile` (later mappings override).
  Status SetTileMapping(const Tensor& tensor, uint32_t tile);
  // Maps elements [begin, end) of a variable to `tile`: a stored mapping
  // restored run by run, without a view per run.
  Status SetTileMapping(VariableId variable, uint64_t begin, uint64_t end, uint32_t tile);
  // Maps each region of `runs` to `tile`, in order (a field's operand laid
  // out where its vertex reads it).
  Status SetTileMapping(std::span<const StridedRegion> runs, uint32_t tile);

  // Room for `count` tile runs of a variable (a stored mapping being
  // restored run by run); nothing for an unknown variable.
  void ReserveTileRuns(VariableId variable, size_t count) {
    if (variable < tile_maps_.size()) tile_maps_[variable].Reserve(count);
  }
  // ---- Compute -----------------------------------------------------------
  ComputeSetId AddComputeSet(std::string_view name);
  // A vertex of the codelet named `codelet` (custom codelets first, then the
  // built-in catalogue). Error: unknown compute set or codelet.
  Expected<VertexRef> AddVertex(ComputeSetId compute_set, std::string_view codelet,
                                std::string_view debug_name = {});
  // Room for `count` vertices in all, when the number is known (a graph
  // being loaded): no reallocation as they are added.
  void ReserveVertices(size_t count) { vertices_.reserve(count); }
  // Same with a codelet object, which must outlive the graph (catalogue
  // codelets live for the whole program).
  Expected<VertexRef> AddVertex(ComputeSetId compute_set, const Codelet& codelet,
                                std::string_view debug_name = {});
  // Connects a field to a tensor (one edge). Errors: unknown vertex or field,
  // field already connected, element type differs, a scalar field given other
  // than one element, an empty tensor, a written field given constants or
  // repeated elements, a tensor naming elements the graph does not have.
  // The graph copies the tensor's shape and regions into its own arrays.
  Status Connect(const FieldRef& field, const Tensor& tensor);
  // The same by field number (the codelet's order): for callers connecting
  // the same fields of many vertices, without a lookup by name each.
  Status Connect(VertexRef vertex, size_t field, const Tensor& tensor);
  // Connects field number `field` (the codelet's order) to the elements of
  // `regions` seen as `shape`, with the checks of Connect, and also that the
  // runs are well formed and hold exactly the shape's elements: how a graph
  // read from a file is rebuilt without a Tensor per field.
  Status ConnectRegions(VertexRef vertex, size_t field, ElementType type,
                        std::span<const uint64_t> shape, std::span<const TensorRegion> regions);
  // The same with the regions as the graph keeps them (StridedRegion runs,
  // FieldView::regions().runs()): how an executable file's fields are
  // rebuilt without listing every region. Each run is checked to lie in
  // its variable and, for a written field, the runs never to repeat an
  // element (engine/graph/graph_runs.cc).
  Status ConnectRuns(VertexRef vertex, size_t field, ElementType type,
                     std::span<const uint64_t> shape, std::span<const StridedRegion> runs);
  // Sets a codelet parameter (Poplar's setInitialValue).
  Status SetInitialValue(const FieldRef& param, uint32_t value);
  // Sets every parameter, in the codelet's order (its params()): what the
  // compiler does for vertices with dozens of them, without a lookup by
  // name each. Error unless there is one value per parameter.
  Status SetInitialValues(VertexRef vertex, std::span<const uint32_t> values);
  Status SetTileMapping(VertexRef vertex, uint32_t tile);
  // Overrides the codelet's cycle estimate for this vertex (Poplar's
  // setPerfEstimate; units as Codelet::EstimateCycles).
  Status SetPerfEstimate(VertexRef vertex, uint64_t cycles);
  // That override, if any.
  std::optional<uint64_t> PerfEstimate(VertexId id) const;
  // Registers a custom codelet for AddVertex by name. Error if the name is
  // taken (by a custom or a built-in codelet).
  Status AddCodelet(std::shared_ptr<const Codelet> codelet);

  // ---- Host streams ------------------------------------------------------
  Expected<DataStream> AddHostToDeviceFifo(std::string_view name, ElementType type,
                                           uint64_t num_elements);
  Expected<DataStream> AddDeviceToHostFifo(std::string_view name, ElementType type,
                                           uint64_t num_elements);

  // ---- Queries (ids are dense: 0 .. count-1) ------------------------------
  size_t num_variables() const { return variables_.size(); }
  const VariableInfo& variable(VariableId id) const { return variables_.at(id); }
  size_t num_compute_sets() const { return compute_sets_.size(); }
  const ComputeSetInfo& compute_set(ComputeSetId id) const { return compute_sets_.at(id); }
  size_t num_vertices() const { return vertices_.size(); }
  const VertexInfo& vertex(VertexId id) const { return vertices_.at(id); }
  // The vertex's fields in codelet field order (unconnected ones included),
  // and its parameters in codelet parameter order (nullopt when unset).
  std::span<const FieldView> fields(VertexId id) const;
  std::span<const std::optional<uint32_t>> params(VertexId id) const;
  // Elements per field (0 when unconnected) and parameter values (0 when
  // unset), as the codelet's CheckShape and EstimateCycles take them.
  std::vector<uint64_t> FieldElements(VertexId id) const;
  std::vector<uint32_t> ParamValues(VertexId id) const;
  size_t num_streams() const { return streams_.size(); }
  const StreamInfo& stream(StreamId id) const { return streams_.at(id); }

  // The tile runs of a variable, in element order (unmapped gaps omitted).
  const std::vector<TileRun>& TileMapping(VariableId id) const;
  // Applies every tile mapping made out of element order (TileMap::Assign
  // defers those). Reading mappings is safe from several threads only
  // after this, so whoever starts parallel readers calls it first.
  void FlushTileMappings() const {
    for (const TileMap& map : tile_maps_) map.Flush();
  }
  // The tensor's regions split where the tile changes, in element order.
  std::vector<MappedRegion> MapRegions(const Tensor& tensor) const;
  // Calls f(const MappedRegion&) for each piece MapRegions would return,
  // without building the vector (the memory model walks every field).
  template <typename Regions, typename F>
  void ForEachMappedRegion(const Regions& regions, F&& f) const;
  template <typename F>
  void ForEachMappedRegion(const Tensor& tensor, F&& f) const {
    ForEachMappedRegion(tensor.regions(), std::forward<F>(f));
  }
  // Calls f(const TensorRegion& piece, const TileRun* run) for each piece of
  // `region` on one tile, with the variable's run holding it (nullptr when
  // unmapped); runs are those of TileMapping(region.variable).
  template <typename F>
  void ForEachRunPiece(const TensorRegion& region, F&& f) const {
    if (region.variable >= tile_maps_.size()) {
      f(region, static_cast<const TileRun*>(nullptr));
      return;
    }
    tile_maps_[region.variable].ForEachRunPiece(
        region.begin, region.end, [&](uint64_t begin, uint64_t end, const TileRun* run) {
          f(TensorRegion{region.variable, begin, end}, run);
        });
  }
  // The same for each row of a strided region, in row order.
  template <typename F>
  void ForEachRunPiece(const StridedRegion& strided, F&& f) const {
    if (strided.variable >= tile_maps_.size()) {
      for (uint32_t k = 0; k < strided.count; ++k)
        f(strided.At(k), static_cast<const TileRun*>(nullptr));
      return;
    }
    tile_maps_[strided.variable].ForEachStridedRunPiece(
        strided.begin, strided.length, strided.stride, strided.count,
        [&](uint64_t begin, uint64_t end, const TileRun* run) {
          f(TensorRegion{strided.variable, begin, end}, run);
        });
  }
  // The tile holding every element of `region`, if one tile run does.
  std::optional<uint32_t> TileHolding(const TensorRegion& region) const {
    if (region.variable >= tile_maps_.size()) return std::nullopt;
    return tile_maps_[region.variable].TileHolding(region.begin, region.end);
  }
  // The vertex's perf-estimate override, else its codelet's estimate.
  uint64_t VertexCycles(VertexId id) const;
  // "vertex 3 'add.1' (SumVertex)" for messages.
  std::string DescribeVertex(VertexId id) const;
  // "variable 0 'v1' (f32[4])" for messages.
  std::string DescribeVariable(VariableId id) const;
  // Error unless the tensor is valid and every region lies inside a variable
  // of this graph; `what` starts the message.
  Status CheckTensor(const Tensor& tensor, std::string_view what) const;

  // ---- Validation and statistics -----------------------------------------
  // Every problem of the finished graph (empty when valid): unmapped elements
  // (as ranges, per variable), unmapped vertices, unconnected fields, unset
  // parameters, codelet size checks, a written field overlapping another
  // field of its vertex, two vertices of one compute set writing the same
  // element.
  std::vector<Error> Check() const;
  // The first problem of Check(), with the number of others.
  Status Validate() const;
  GraphStats Stats() const;
  // Tiles that hold data or vertices, in tile order.
  std::vector<TileUsage> TileUsages() const;

 private:
  Expected<Tensor> AddData(ElementType type, std::vector<uint64_t> shape, std::string_view name,
                           bool is_constant, std::vector<std::byte> data);
  Expected<DataStream> AddStream(std::string_view name, ElementType type, uint64_t num_elements,
                                 StreamDirection direction);
  // CheckTensor without the leading place.
  Status CheckTensorRegions(const Tensor& tensor) const;
  // The runs lie in this graph's variables of `type` and hold exactly the
  // shape's elements; returns that count.
  Expected<uint64_t> CheckRegions(ElementType type, std::span<const uint64_t> shape,
                                  std::span<const TensorRegion> regions) const;
  // What both ways of connecting a field check and do: the field exists and
  // is free, the tensor suits it, and its runs are stored in the slot.
  Expected<FieldView*> UnconnectedField(VertexRef ref, size_t index);
  std::string FieldPlace(VertexRef ref, size_t index) const;
  Status CheckFieldTensor(VertexRef ref, size_t index, ElementType type,
                          std::span<const uint64_t> shape, uint64_t elements) const;
  // Why a written field cannot take the tensor: it includes `constant`, or
  // (nullopt) it repeats elements.
  Error WriteError(VertexRef ref, size_t index, std::optional<VariableId> constant) const;
  void StoreField(VertexRef ref, FieldView& slot, ElementType type, std::span<const uint64_t> shape,
                  uint64_t elements, std::span<const StridedRegion> runs, uint64_t regions);
  // ConnectRuns' checks of the runs against the variables; returns the
  // number of elements and of regions.
  Expected<std::pair<uint64_t, uint64_t>> CheckRuns(ElementType type,
                                                    std::span<const uint64_t> shape,
                                                    std::span<const StridedRegion> runs) const;
  Status CheckVertex(VertexId id) const;
  void CheckComputeSetWrites(ComputeSetId id, std::vector<Error>& problems) const;

  Target target_;
  std::vector<VariableInfo> variables_;
  std::vector<TileMap> tile_maps_;  // by variable
  std::vector<ComputeSetInfo> compute_sets_;
  // Millions of vertices: kept small (the rare SetPerfEstimate override
  // lives beside them) and in chunks that never move.
  StableVector<VertexInfo> vertices_;
  std::unordered_map<VertexId, uint64_t> perf_estimates_;
  FieldArena<FieldView> field_slots_;
  FieldArena<std::optional<uint32_t>> param_slots_;
  FieldArena<StridedRegion> field_runs_;
  FieldArena<uint64_t> field_dims_;
  // The vertices' debug names (node-based: the views stay valid on insert
  // and on a move of the graph).
  std::unordered_set<std::string> debug_names_;
  std::vector<StreamInfo> streams_;
  std::unordered_map<std::string, std::shared_ptr<const Codelet>> custom_codelets_;
};

template <typename Regions, typename F>
void Graph::ForEachMappedRegion(const Regions& regions, F&& f) const {
  for (const TensorRegion& region : regions) {
    if (region.variable >= tile_maps_.size()) {
      f(MappedRegion{region, std::nullopt});
      continue;
    }
    tile_maps_[region.variable].ForEachPiece(
        region.begin, region.end, [&](uint64_t begin, uint64_t end, std::optional<uint32_t> tile) {
          f(MappedRegion{{region.variable, begin, end}, tile});
        });
  }
}

}  // namespace tileprof::engine
