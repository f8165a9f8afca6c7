// The report data model: plain structs for a compilation report (target,
// graph, per-tile memory, variables) and an execution report, shared by every
// reader and writer in reports/ and filled by the engine. The memory model is
// ../shared/DESIGN.md "The memory model"; labels and layout come from
// ../shared/spec/text-report.md.
//
// Two kinds of memory data live here:
//  * per-tile data (TileMemory), complete and exact, which the engine fills
//    for every tile; whole-graph numbers, the By Tile histogram and the
//    five-most-used-tile blocks are DERIVED from it (Summarize,
//    SummarizeByTile, TopTiles);
//  * numbers read verbatim from a text report (CompilationReport::verbatim),
//    which prints only the derived figures and at most five tile blocks, and
//    may be an excerpt with rows left out. MemoryUsage::known says which rows
//    were actually read.
// The Resolve* functions give the derived figures when per-tile data is
// present and the verbatim ones otherwise, so writers and the analyzer do not
// care where a report came from.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/histogram.h"
#include "reports/report_keys.h"

namespace tileprof::report {

// The version of the report data model, carried by every format we write
// (optional line in the text report). Readers accept any minor of a known
// major and reject other majors naming both versions.
struct FormatVersion {
  uint32_t major = 0;
  uint32_t minor = 0;

  bool operator==(const FormatVersion&) const = default;
};
inline constexpr FormatVersion kFormatVersion{1, 2};

// ---------------------------------------------------------------------------
// Categories, regions, vertex data categories (spec sections 4 and 8).

// The 18 storage categories, in the order the text report prints them.
enum class Category : uint8_t {
  kVariables,
  kConstants,
  kHostExchangePacketHeaders,
  kGlobalExchangePacketHeaders,
  kStack,
  kVertexInstances,
  kCopyDescriptors,
  kVectorListDescriptors,
  kVertexFieldData,
  kControlTable,
  kControlCode,
  kVertexCode,
  kInternalExchangeCode,
  kHostExchangeCode,
  kGlobalExchangeCode,
  kInstrumentationResults,
  kSharedCodeStorage,
  kSharedDataStorage,
};
inline constexpr size_t kNumCategories = 18;

// "Host Exchange Packet Headers" (the text row label, without the colon).
std::string_view CategoryLabel(Category category);
// "hostExchangePacketHeader" (spec 8.2; some names are our inference).
std::string_view CategoryMachineName(Category category);
std::optional<Category> CategoryFromLabel(std::string_view label);
// Note: "controlId" is a documented machine name with no text row; it maps to
// nullopt, and whoever produces control-id bytes must choose a category.
std::optional<Category> CategoryFromMachineName(std::string_view name);

enum class Region : uint8_t { kNonInterleaved, kInterleaved, kOverflowed };
inline constexpr size_t kNumRegions = 3;
std::string_view RegionLabel(Region region);  // "Non-interleaved"

// Vertex Data "By Category" rows.
enum class VertexDataCategory : uint8_t {
  kInternalVertexState,
  kEdgePointers,
  kCopyPointers,
  kPadding,
  kDescriptors,
};
inline constexpr size_t kNumVertexDataCategories = 5;
std::string_view VertexDataCategoryLabel(VertexDataCategory category);  // "Edge pointers"

// The categories whose bytes make up "Vertex Data (<n>B)" (spec 5.2).
inline constexpr Category kVertexDataCategories[] = {
    Category::kVertexInstances, Category::kVertexFieldData, Category::kCopyDescriptors,
    Category::kVectorListDescriptors};

using CategoryBytes = std::array<uint64_t, kNumCategories>;
using VertexDataBytes = std::array<uint64_t, kNumVertexDataCategories>;

template <typename Array, typename Enum>
auto& At(Array& array, Enum e) {
  return array[static_cast<size_t>(e)];
}

// ---------------------------------------------------------------------------
// Target and graph (spec sections 3 and 9).

struct Replication {
  uint32_t num_replicas = 1;
  uint32_t ipus_per_replica = 1;
  uint64_t tiles_per_replica = 0;
  uint64_t memory_per_replica = 0;  // bytes

  bool operator==(const Replication&) const = default;
};
template <>
struct Keys<Replication> {
  static constexpr std::tuple kAll{
      Key{"numReplicas", "num_replicas", &Replication::num_replicas},
      Key{"ipusPerReplica", "ipus_per_replica", &Replication::ipus_per_replica},
      Key{"tilesPerReplica", "tiles_per_replica", &Replication::tiles_per_replica},
      Key{"memoryPerReplica", "memory_per_replica", &Replication::memory_per_replica}};
};

// What the Target section prints, plus the architecture name (not printed:
// the text report does not distinguish targets; empty when read from text).
// MakeTarget fills the derived fields exactly; the text report prints sizes
// rounded to 0.1 of their unit, so a Target read from text says so.
struct Target {
  std::string arch;  // "ipu1", "ipu2", "ipu21", or a custom name
  uint32_t num_ipus = 0;
  uint64_t tiles_per_ipu = 0;
  uint64_t total_tiles = 0;     // num_ipus * tiles_per_ipu
  uint64_t bytes_per_tile = 0;  // printed "Memory Per-Tile"
  uint64_t total_memory = 0;    // total_tiles * bytes_per_tile
  double clock_hz = 0;
  // The four replica lines newer SDKs print; absent in the Mk1 sample.
  std::optional<Replication> replication;
  // True when the byte sizes were read back from rounded text ("256.0 kB"):
  // they are the closest values that print the same, not necessarily exact.
  bool sizes_rounded = false;

  bool operator==(const Target&) const = default;
};
template <>
struct Keys<Target> {
  static constexpr std::tuple kAll{
      Key{"arch", "arch", &Target::arch},
      Key{"numIpus", "num_ipus", &Target::num_ipus},
      Key{"tilesPerIpu", "tiles_per_ipu", &Target::tiles_per_ipu},
      Key{"totalTiles", "total_tiles", &Target::total_tiles},
      Key{"bytesPerTile", "bytes_per_tile", &Target::bytes_per_tile},
      Key{"totalMemory", "total_memory", &Target::total_memory},
      Key{"clockFrequency", "clock_hz", &Target::clock_hz},
      Key{"sizesRounded", "sizes_rounded", &Target::sizes_rounded, Presence::kDefaulted},
      Slot{"replication"}};
};

// A Target with the derived fields computed. `ipus_per_replica` > 0 adds the
// replica lines (num_ipus / ipus_per_replica replicas).
Target MakeTarget(std::string arch, uint32_t num_ipus, uint64_t tiles_per_ipu,
                  uint64_t bytes_per_tile, double clock_hz, uint32_t ipus_per_replica = 0);

struct GraphInfo {
  uint64_t num_vertices = 0;  // including control code vertices
  uint64_t num_edges = 0;
  uint64_t num_variables = 0;
  uint64_t num_compute_sets = 0;

  bool operator==(const GraphInfo&) const = default;
};
template <>
struct Keys<GraphInfo> {
  static constexpr std::tuple kAll{
      Key{"numVertices", "num_vertices", &GraphInfo::num_vertices},
      Key{"numEdges", "num_edges", &GraphInfo::num_edges},
      Key{"numVariables", "num_variables", &GraphInfo::num_variables},
      Key{"numComputeSets", "num_compute_sets", &GraphInfo::num_compute_sets}};
};

// ---------------------------------------------------------------------------
// Per-tile memory, as the engine lays it out.

struct RegionBytes {
  uint64_t excluding_gaps = 0;
  uint64_t including_gaps = 0;  // >= excluding_gaps

  bool operator==(const RegionBytes&) const = default;
};
template <>
struct Keys<RegionBytes> {
  static constexpr std::tuple kAll{
      Key{"excludingGaps", "excluding_gaps", &RegionBytes::excluding_gaps},
      Key{"includingGaps", "including_gaps", &RegionBytes::including_gaps}};
};

// Vertex data bytes of one vertex type on one tile. `type` indexes
// CompilationReport::vertex_types (names are interned: 94,208 tiles times a
// dozen types would otherwise be a million strings).
struct VertexTypeBytes {
  uint32_t type = 0;
  uint64_t bytes = 0;

  bool operator==(const VertexTypeBytes&) const = default;
};
template <>
struct Keys<VertexTypeBytes> {
  static constexpr std::tuple kAll{Key{"type", "vertex_type", &VertexTypeBytes::type},
                                   Key{"bytes", "bytes", &VertexTypeBytes::bytes}};
};

// One tile. Invariants (CheckInvariants): categories sum to the regions'
// excluding-gaps bytes; including >= excluding per region; always_live +
// not_always_live equals the excluding-gaps total; vertex_data sums to the
// four vertex-data categories.
struct TileMemory {
  uint32_t tile = 0;  // global tile id (tile / tiles_per_ipu is the IPU)
  CategoryBytes by_category{};
  std::array<RegionBytes, kNumRegions> by_region{};
  // Everything but not-always-live variables (code, stack, descriptors, ...).
  uint64_t always_live = 0;
  // The peak of the memory that not-always-live variables share by liveness.
  uint64_t not_always_live = 0;
  VertexDataBytes vertex_data{};
  std::vector<VertexTypeBytes> vertex_types;

  uint64_t ExcludingGaps() const;  // sum of the regions' excluding-gaps bytes
  uint64_t IncludingGaps() const;  // sum of the regions' including-gaps bytes
  uint64_t CategoryTotal() const;  // sum of by_category

  bool operator==(const TileMemory&) const = default;
};
template <>
struct Keys<TileMemory> {
  static constexpr std::tuple kAll{
      Key{"tile", "tile", &TileMemory::tile},
      Slot{"categories"},
      Slot{"regions"},
      Key{"alwaysLiveBytes", "always_live", &TileMemory::always_live, Presence::kDefaulted},
      Key{"notAlwaysLiveBytes", "not_always_live", &TileMemory::not_always_live,
          Presence::kDefaulted},
      Slot{"vertexData"},
      Slot{"vertexTypes"}};
};

// ---------------------------------------------------------------------------
// A printed Memory Usage block: the whole graph (spec section 4) or one tile
// (section 6).

struct NamedBytes {
  std::string name;
  uint64_t bytes = 0;

  bool operator==(const NamedBytes&) const = default;
};
template <>
struct Keys<NamedBytes> {
  static constexpr std::tuple kAll{Key{"name", "name", &NamedBytes::name},
                                   Key{"bytes", "bytes", &NamedBytes::bytes}};
};

// Which rows of a MemoryUsage are known. Everything is known for blocks
// derived from per-tile data; a block read from text knows the rows it read.
struct MemoryRowsKnown {
  bool including_gaps = true;
  std::bitset<kNumRegions> regions = std::bitset<kNumRegions>().set();
  std::bitset<kNumCategories> categories = std::bitset<kNumCategories>().set();
  bool vertex_data = true;  // the "Vertex Data (<n>B)" header
  std::bitset<kNumVertexDataCategories> vertex_data_categories =
      std::bitset<kNumVertexDataCategories>().set();
  bool by_vertex_type = true;  // a "By Type:" list was present

  static MemoryRowsKnown None();
  bool IsComplete() const;
  bool IsEmpty() const;
  bool operator==(const MemoryRowsKnown&) const = default;
};

struct MemoryUsage {
  uint64_t including_gaps = 0;
  std::array<uint64_t, kNumRegions> by_region{};  // excluding gaps
  CategoryBytes by_category{};                    // excluding gaps
  uint64_t vertex_data = 0;                       // VI + VFD + CD + VLD when derived
  VertexDataBytes vertex_data_by_category{};
  std::vector<NamedBytes> by_vertex_type;  // descending bytes, ties by name, when derived
  MemoryRowsKnown known;

  uint64_t ExcludingGaps() const;  // sum of by_region (the known rows)
  bool operator==(const MemoryUsage&) const = default;
};

struct TileUsage {
  uint32_t tile = 0;
  MemoryUsage usage;

  bool operator==(const TileUsage&) const = default;
};
template <>
struct Keys<TileUsage> {
  static constexpr std::tuple kAll{Key{"tile", "tile", &TileUsage::tile}, Slot{"usage"}};
};

// ---------------------------------------------------------------------------
// Compilation report.

struct VertexType {
  std::string name;  // C++ type, e.g. "popops::ScaledAddSupervisor<float,float,true>"

  bool operator==(const VertexType&) const = default;
};
template <>
struct Keys<VertexType> {
  static constexpr std::tuple kAll{Key{"name", "name", &VertexType::name}};
};

// A variable as the lowered-variables report knows it (spec appendix A).
struct Variable {
  std::string name;
  uint32_t tile = 0;
  uint64_t bytes = 0;
  Category category = Category::kVariables;
  bool always_live = false;
  std::optional<uint64_t> offset;  // byte address on the tile, when laid out

  bool operator==(const Variable&) const = default;
};
template <>
struct Keys<Variable> {
  static constexpr std::tuple kAll{
      Key{"name", "name", &Variable::name},
      Key{"tile", "tile", &Variable::tile},
      Key{"bytes", "bytes", &Variable::bytes},
      Key{"category", "category", &Variable::category},
      Key{"alwaysLive", "always_live", &Variable::always_live, Presence::kDefaulted},
      Key{"offset", "address", &Variable::offset}};
};

// The vertices one compute set runs, per vertex type over all tiles (the
// libpva computeSets[].vertices[] shape without its countByTile).
struct ComputeSetVertices {
  uint32_t type = 0;  // indexes CompilationReport::vertex_types
  uint64_t count = 0;

  bool operator==(const ComputeSetVertices&) const = default;
};
template <>
struct Keys<ComputeSetVertices> {
  static constexpr std::tuple kAll{Key{"type", "vertex_type", &ComputeSetVertices::type},
                                   Key{"count", "count", &ComputeSetVertices::count}};
};

struct ComputeSet {
  std::string name;
  std::vector<ComputeSetVertices> vertices;

  bool operator==(const ComputeSet&) const = default;
};
template <>
struct Keys<ComputeSet> {
  static constexpr std::tuple kAll{Key{"name", "name", &ComputeSet::name}, Slot{"vertices"}};
};

// A node of the compiled program tree. `kind` is a string, not an enum, so
// the engine can add program kinds without a format change; the vocabulary
// is libpva's (Sequence, Execute, Copy, Repeat, If, Sync, DoExchange,
// StreamCopy, ...).
struct Program {
  std::string name;
  std::string kind;
  std::vector<uint32_t> children;       // indexes CompilationReport::programs
  std::optional<uint32_t> compute_set;  // indexes CompilationReport::compute_sets

  bool operator==(const Program&) const = default;
};
template <>
struct Keys<Program> {
  static constexpr std::tuple kAll{Key{"name", "name", &Program::name},
                                   Key{"kind", "kind", &Program::kind}, Slot{"children"},
                                   Key{"computeSet", "compute_set", &Program::compute_set}};
};

// One step of the compiled schedule, in the order the control program runs
// them (each loop body once, both branches of an If): libpva's
// livenessProgramSteps. The bytes are those of not-always-live variables and
// exchange receive buffers live during the step, summed over all tiles.
struct LivenessStep {
  uint32_t program = 0;  // indexes CompilationReport::programs
  uint64_t not_always_live = 0;

  bool operator==(const LivenessStep&) const = default;
};
template <>
struct Keys<LivenessStep> {
  static constexpr std::tuple kAll{
      Key{"program", "program", &LivenessStep::program},
      Key{"notAlwaysLiveBytes", "not_always_live", &LivenessStep::not_always_live}};
};

// An HLO instruction the compiler lowered into compute sets: PopVision's
// Operations. The vertices and their state are those of its compute sets;
// the exchange bytes are what its steps' vertices received from other tiles
// (receive buffers, summed over the steps and tiles); the code bytes are the
// vertex code its vertices need (each codelet's code once per tile it runs
// on: what the operation would take alone; operations sharing a codelet on
// a tile each count it); tiles is how many tiles its vertices are on
// (which, in operation_tiles); FLOPs as hlo::EstimateOperationFlops (absent
// where not estimated). Cycles come from an execution: its steps name the
// compute sets they run. Code bytes and tiles are absent in format 1.1.
struct Operation {
  std::string name;
  std::string opcode;
  uint64_t vertices = 0;
  uint64_t vertex_state_bytes = 0;
  uint64_t exchange_bytes = 0;
  std::optional<uint64_t> flops;
  std::optional<uint64_t> code_bytes;
  std::optional<uint64_t> tiles;

  bool operator==(const Operation&) const = default;
};
template <>
struct Keys<Operation> {
  static constexpr std::tuple kAll{
      Key{"name", "name", &Operation::name},
      Key{"opcode", "opcode", &Operation::opcode},
      Key{"vertices", "vertices", &Operation::vertices},
      Key{"vertexStateBytes", "vertex_state_bytes", &Operation::vertex_state_bytes},
      Key{"exchangeBytes", "exchange_bytes", &Operation::exchange_bytes},
      Key{"flops", "flops", &Operation::flops},
      Key{"codeBytes", "code_bytes", &Operation::code_bytes},
      Key{"tiles", "tiles", &Operation::tiles}};
};

// A run of consecutive tiles holding vertices of one operation, and how
// many (PopVision's "select an op to see its tiles"): an operation's runs
// are in tile order and do not touch, so a linearly mapped operation is
// one row however many tiles it spans.
struct OperationTiles {
  uint32_t operation = 0;  // indexes CompilationReport::operations
  uint32_t first_tile = 0;
  uint32_t last_tile = 0;  // inclusive
  uint64_t vertices = 0;   // on the run's tiles

  bool operator==(const OperationTiles&) const = default;
};
template <>
struct Keys<OperationTiles> {
  static constexpr std::tuple kAll{Key{"operation", "operation", &OperationTiles::operation},
                                   Key{"firstTile", "first_tile", &OperationTiles::first_tile},
                                   Key{"lastTile", "last_tile", &OperationTiles::last_tile},
                                   Key{"vertices", "vertices", &OperationTiles::vertices}};
};

// The not-always-live bytes of one IPU's tiles during a liveness step (a
// report for more than one IPU; one IPU's figure is the step's own).
struct IpuStep {
  uint64_t step = 0;  // indexes CompilationReport::liveness
  uint32_t ipu = 0;
  uint64_t not_always_live = 0;

  bool operator==(const IpuStep&) const = default;
};
template <>
struct Keys<IpuStep> {
  static constexpr std::tuple kAll{
      Key{"step", "step", &IpuStep::step}, Key{"ipu", "ipu", &IpuStep::ipu},
      Key{"notAlwaysLiveBytes", "not_always_live", &IpuStep::not_always_live}};
};

// Which operation made a compute set (compute sets of no HLO instruction,
// such as the seed's, have none).
struct ComputeSetOperation {
  uint32_t compute_set = 0;  // indexes CompilationReport::compute_sets
  uint32_t operation = 0;    // indexes CompilationReport::operations

  bool operator==(const ComputeSetOperation&) const = default;
};
template <>
struct Keys<ComputeSetOperation> {
  static constexpr std::tuple kAll{
      Key{"computeSet", "compute_set", &ComputeSetOperation::compute_set},
      Key{"operation", "operation", &ComputeSetOperation::operation}};
};

// The tile holding the most not-always-live bytes during a liveness step
// (the lowest-numbered of equals), and those bytes: PopVision's worst tile
// of a step.
struct StepTile {
  uint32_t tile = 0;
  uint64_t not_always_live = 0;

  bool operator==(const StepTile&) const = default;
};
template <>
struct Keys<StepTile> {
  static constexpr std::tuple kAll{
      Key{"tile", "tile", &StepTile::tile},
      Key{"notAlwaysLiveBytes", "not_always_live", &StepTile::not_always_live}};
};

// A not-always-live variable or the exchange receive buffers of a step, its
// bytes summed over the tiles holding it, and the schedule steps during
// which it is live (indexes of CompilationReport::liveness, inclusive): the
// entries live at step i are those with first_step <= i <= last_step, and
// their bytes sum to liveness[i].not_always_live (libpva's
// notAlwaysLiveMemory.variables of a step, PopVision's "live at this step").
struct LiveVariable {
  std::string name;
  uint64_t bytes = 0;
  uint64_t first_step = 0;
  uint64_t last_step = 0;

  bool operator==(const LiveVariable&) const = default;
};
template <>
struct Keys<LiveVariable> {
  static constexpr std::tuple kAll{Key{"name", "name", &LiveVariable::name},
                                   Key{"bytes", "bytes", &LiveVariable::bytes},
                                   Key{"firstStep", "first_step", &LiveVariable::first_step},
                                   Key{"lastStep", "last_step", &LiveVariable::last_step}};
};

// Figures a text report printed, kept when per-tile data is absent.
struct VerbatimMemory {
  std::optional<MemoryUsage> total;      // whole-graph Memory Usage
  std::optional<ByTileSummary> by_tile;  // histogram, maxima, OOM count
  std::vector<TileUsage> tile_blocks;    // "Tile # N memory usage:" blocks, as printed

  bool operator==(const VerbatimMemory&) const = default;
};

struct CompilationReport {
  std::optional<Target> target;    // absent only when read from an excerpt
  std::optional<GraphInfo> graph;  // likewise
  std::vector<VertexType> vertex_types;
  // Either empty (a report read from text) or one entry per tile, in tile
  // order, for every tile of the target.
  std::vector<TileMemory> tiles;
  std::vector<Variable> variables;
  VerbatimMemory verbatim;  // empty for reports the engine makes
  // Empty when read from text, which prints neither.
  std::vector<ComputeSet> compute_sets;
  std::vector<Program> programs;
  // Empty when read from text or from a file written before they existed.
  std::vector<Operation> operations;
  std::vector<ComputeSetOperation> compute_set_operations;  // by compute set
  std::vector<OperationTiles> operation_tiles;              // by operation, then tile (format 1.2)
  // Empty when read from text, or from a file written before they existed.
  std::vector<LivenessStep> liveness;
  // One per liveness step (or none, as `liveness`): the fullest tile then.
  std::vector<StepTile> liveness_fullest_tiles;
  // Per step, each IPU's bytes (by step, then IPU) when the target has more
  // than one IPU; empty otherwise and before format 1.2.
  std::vector<IpuStep> liveness_by_ipu;
  // Every always-live variable (constants), its bytes summed over the tiles
  // holding it, largest first (ties by name): libpva's alwaysLiveVariables.
  std::vector<NamedBytes> always_live_variables;
  // Every not-always-live variable and step's receive buffers with the steps
  // they are live, largest first (ties by first step, then name). Empty
  // when read from text or from a file written before it existed.
  std::vector<LiveVariable> not_always_live_variables;

  bool operator==(const CompilationReport&) const = default;
};

// ---------------------------------------------------------------------------
// Execution report (spec section 7).

enum class CycleKind : uint8_t {
  kComputeIncludingIdle,
  kComputeExcludingIdle,
  kIpuExchange,
  kGlobalExchange,
  kHostExchange,
  kSync,
};
inline constexpr size_t kNumCycleKinds = 6;
// "Tile average compute cycles (including idle threads)" (without the colon).
std::string_view TileAverageLabel(CycleKind kind);

struct TileCycles {
  uint32_t tile = 0;
  std::array<uint64_t, kNumCycleKinds> cycles{};

  bool operator==(const TileCycles&) const = default;
};

struct VertexTypeCycles {
  std::string name;
  uint64_t instances = 0;
  uint64_t cycles = 0;

  bool operator==(const VertexTypeCycles&) const = default;
};
template <>
struct Keys<VertexTypeCycles> {
  static constexpr std::tuple kAll{Key{"name", "name", &VertexTypeCycles::name},
                                   Key{"instances", "instances", &VertexTypeCycles::instances},
                                   Key{"cycles", "cycles", &VertexTypeCycles::cycles}};
};

// One step of the program execution sequence (showExecutionSteps).
struct ExecutionStep {
  std::string program;
  uint64_t cycles = 0;
  // Indexed by tile id; empty unless profiled at tile level (the text
  // report never prints it). A tile's busy cycles (compute and exchange).
  std::vector<uint64_t> cycles_by_tile;
  // The step's tile cycles summed over all tiles, split as the BSP step
  // spends them: computing (including idle worker slots), exchanging
  // (internal, global and host) and in sync (the barrier and waiting for
  // the slowest tile). They add up to cycles x tiles. Absent before
  // format 1.2.
  std::optional<uint64_t> compute_cycles;
  std::optional<uint64_t> exchange_cycles;
  std::optional<uint64_t> sync_cycles;

  bool operator==(const ExecutionStep&) const = default;
};
template <>
struct Keys<ExecutionStep> {
  static constexpr std::tuple kAll{
      Key{"program", "program", &ExecutionStep::program},
      Key{"cycles", "cycles", &ExecutionStep::cycles},
      Slot{"cyclesByTile"},
      Key{"computeCycles", "compute_cycles", &ExecutionStep::compute_cycles},
      Key{"exchangeCycles", "exchange_cycles", &ExecutionStep::exchange_cycles},
      Key{"syncCycles", "sync_cycles", &ExecutionStep::sync_cycles}};
};

// One tile's cycles over the whole execution, split as ExecutionStep's (the
// steps x tiles matrix of the split would be too large to keep: this is its
// sum over the steps, every step counted, recorded or not). Kept for a
// tile-level profile only.
struct TileCycleSplit {
  uint32_t tile = 0;
  uint64_t compute = 0;
  uint64_t exchange = 0;
  uint64_t sync = 0;

  bool operator==(const TileCycleSplit&) const = default;
};
template <>
struct Keys<TileCycleSplit> {
  static constexpr std::tuple kAll{Key{"tile", "tile", &TileCycleSplit::tile},
                                   Key{"compute", "compute", &TileCycleSplit::compute},
                                   Key{"exchange", "exchange", &TileCycleSplit::exchange},
                                   Key{"sync", "sync", &TileCycleSplit::sync}};
};

// A figure of the SDK 1.x Execution layout, which printed sums over all tiles
// where later SDKs print tile averages, and said when a figure was estimated
// or not measured:
//   Total compute cycles (including idle threads): 5,513,152 Estimated (must enable
//   debug.instrumentCompute) Total global exchange cycles:                  Must enable
//   debug.instrumentExternalExchange
struct CycleTotal {
  bool printed = false;            // the report has the row
  std::optional<uint64_t> cycles;  // unset when the report says it was not measured
  bool estimated = false;          // "Estimated (must enable <option>)"
  std::string needs_option;        // the debug.* option the row names, if any

  bool operator==(const CycleTotal&) const = default;
};
// "Total compute cycles (including idle threads)" (without the colon).
std::string_view TileTotalLabel(CycleKind kind);
inline constexpr std::string_view kSharedStructureCopyLabel = "Total shared structure copy cycles";

struct ExecutionReport {
  std::vector<std::string> programs;  // "<anonymous>" for unnamed programs
  uint64_t total_cycles = 0;          // compute + exchange + sync + host I/O, one tile
  double clock_hz = 0;                // for "approx N microseconds"; 0 = unknown
  // Averages over tiles; fill with AverageTileCycles. Unset = not known.
  std::array<std::optional<double>, kNumCycleKinds> tile_average_cycles{};
  // SDK 1.x sums over tiles, per row printed (text reports only for now:
  // JSON, CBOR and SQLite do not carry them). Plain structs with a `printed`
  // flag, not optionals: GCC 12 fails (an internal compiler error) on
  // constant-evaluating an array of optionals of a struct with a string.
  std::array<CycleTotal, kNumCycleKinds> tile_total_cycles{};
  CycleTotal shared_structure_copy_cycles;
  std::vector<VertexTypeCycles> cycles_by_vertex_type;  // descending cycles
  std::vector<ExecutionStep> steps;
  std::vector<TileCycleSplit> tile_cycles;  // by tile; a tile-level profile only

  bool operator==(const ExecutionReport&) const = default;
};
template <>
struct Keys<ExecutionReport> {
  static constexpr std::tuple kAll{
      Slot{"programs"},
      Key{"totalCycles", "total_cycles", &ExecutionReport::total_cycles},
      Key{"clockFrequency", "clock_hz", &ExecutionReport::clock_hz},
      Slot{"tileAverageCycles"},
      Slot{"cyclesByVertexType"},
      Slot{"steps"},
      Slot{"tileCycles"}};
};

std::array<std::optional<double>, kNumCycleKinds> AverageTileCycles(
    std::span<const TileCycles> tiles);

// ---------------------------------------------------------------------------
// Derivations.

// One tile's block: every row known, vertex types named from `vertex_types`
// and sorted by descending bytes, ties by name.
MemoryUsage UsageOfTile(const TileMemory& tile, std::span<const VertexType> vertex_types);

// The whole-graph block: the sum over tiles of UsageOfTile.
MemoryUsage Summarize(std::span<const TileMemory> tiles, std::span<const VertexType> vertex_types);

// The By Tile figures over excluding-gaps bytes. The out-of-memory count
// (tiles whose excluding-gaps bytes exceed bytes_per_tile) is left unknown
// when bytes_per_tile is.
ByTileSummary SummarizeByTile(std::span<const TileMemory> tiles,
                              std::optional<uint64_t> bytes_per_tile);

// The `count` most used tiles by excluding-gaps bytes, descending, ties by
// ascending tile id.
std::vector<const TileMemory*> TopTiles(std::span<const TileMemory> tiles, size_t count);

// tileprof's imbalance rule (the spec leaves it open): memory is imbalanced
// when a tile is out of memory, or when the most used tile holds more than
// twice the mean excluding-gaps bytes per tile.
bool IsImbalanced(std::span<const TileMemory> tiles, std::optional<uint64_t> bytes_per_tile);

// Derived figures when the report has per-tile data, else the verbatim ones.
std::optional<MemoryUsage> ResolveTotal(const CompilationReport& report);
std::optional<ByTileSummary> ResolveByTile(const CompilationReport& report);

// Which tiles get a detailed block.
enum class TileBlocks {
  kWhenImbalanced,  // the default: as Poplar, only when IsImbalanced
  kAlways,
  kNever,
};
inline constexpr size_t kDefaultTileBlocks = 5;

// The detailed tile blocks: the `count` most used tiles (TopTiles) under
// `policy` when the report has per-tile data; else the blocks a text report
// printed (all of them unless the policy is kNever).
std::vector<TileUsage> ResolveTileBlocks(const CompilationReport& report, TileBlocks policy,
                                         size_t count = kDefaultTileBlocks);

}  // namespace tileprof::report
