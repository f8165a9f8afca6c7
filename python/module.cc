// tileprof._tileprof: the C++ report readers and analyses for Python. Thin on
// purpose: it hands Python the report's data (per-tile figures as NumPy
// arrays, the rest as plain lists and dicts) and the analyses' JSON, and
// python/tileprof/ builds the object models (its own and libpva's) on top.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "analyzer/execution_views.h"
#include "analyzer/memory_views.h"
#include "analyzer/oom.h"
#include "analyzer/open_report.h"
#include "analyzer/output.h"
#include "analyzer/tensor_map.h"
#include "reports/report.h"
#include "version.h"

namespace py = pybind11;

namespace tileprof::python {
namespace {

// Raised as tileprof.ReportError with the message the CLI prints after
// "tileprof: <command>: ".
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T Take(Expected<T> value) {
  if (!value) throw ReportError(value.error().message());
  return std::move(*value);
}

using Report = std::shared_ptr<analyzer::LoadedReport>;

Report Open(const std::string& path) {
  // Reading releases the GIL: a 94,208-tile report takes a while, and other
  // Python threads may go on meanwhile.
  py::gil_scoped_release unlocked;
  return std::make_shared<analyzer::LoadedReport>(Take(analyzer::OpenReport(path)));
}

// A 1-D uint64 array of f(tile) over the report's tiles.
template <typename F>
py::array_t<uint64_t> PerTile(const Report& r, F f) {
  const auto& tiles = r->compilation.tiles;
  py::array_t<uint64_t> out(static_cast<py::ssize_t>(tiles.size()));
  auto view = out.mutable_unchecked<1>();
  for (size_t i = 0; i < tiles.size(); ++i) view(static_cast<py::ssize_t>(i)) = f(tiles[i]);
  return out;
}

py::dict TileArrays(const Report& r) {
  py::dict d;
  d["tile"] = PerTile(r, [](const report::TileMemory& t) { return uint64_t{t.tile}; });
  d["excluding_gaps"] = PerTile(r, [](const report::TileMemory& t) { return t.ExcludingGaps(); });
  d["including_gaps"] = PerTile(r, [](const report::TileMemory& t) { return t.IncludingGaps(); });
  d["always_live"] = PerTile(r, [](const report::TileMemory& t) { return t.always_live; });
  d["not_always_live"] = PerTile(r, [](const report::TileMemory& t) { return t.not_always_live; });
  for (size_t k = 0; k < report::kNumRegions; ++k) {
    const auto region = static_cast<report::Region>(k);
    const std::string name(report::RegionLabel(region));
    d[py::str(name + " excluding_gaps")] =
        PerTile(r, [k](const report::TileMemory& t) { return t.by_region[k].excluding_gaps; });
    d[py::str(name + " including_gaps")] =
        PerTile(r, [k](const report::TileMemory& t) { return t.by_region[k].including_gaps; });
  }
  return d;
}

// tiles x categories, in report::Category order, excluding gaps.
py::array_t<uint64_t> CategoryMatrix(const Report& r) {
  const auto& tiles = r->compilation.tiles;
  py::array_t<uint64_t> out(
      {static_cast<py::ssize_t>(tiles.size()), static_cast<py::ssize_t>(report::kNumCategories)});
  auto view = out.mutable_unchecked<2>();
  for (size_t i = 0; i < tiles.size(); ++i)
    for (size_t c = 0; c < report::kNumCategories; ++c)
      view(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(c)) = tiles[i].by_category[c];
  return out;
}

// A record's scalar members as a dict keyed by their SQLite column names
// (snake_case), taken from the report-key table so a new key appears here too.
template <typename Record>
py::dict RecordDict(const Record& record) {
  py::dict d;
  report::ForEachKey<Record>([&](const auto& key) {
    const auto& value = record.*(key.member);
    using Member = report::MemberOf<decltype(key)>;
    if constexpr (std::is_same_v<Member, report::Category>) {
      d[py::str(std::string(key.column))] = std::string(report::CategoryMachineName(value));
    } else if constexpr (report::OptionalValue<Member>::kOptional) {
      d[py::str(std::string(key.column))] = value ? py::cast(*value) : py::none();
    } else {
      d[py::str(std::string(key.column))] = value;
    }
  });
  return d;
}

template <typename Record>
py::object OptionalRecordDict(const std::optional<Record>& record) {
  if (!record) return py::none();
  return RecordDict(*record);
}

py::list ComputeSets(const Report& r) {
  py::list out;
  for (const report::ComputeSet& cs : r->compilation.compute_sets) {
    py::list vertices;
    for (const report::ComputeSetVertices& v : cs.vertices)
      vertices.append(py::make_tuple(v.type, v.count));
    py::dict d;
    d["name"] = cs.name;
    d["vertices"] = vertices;  // (vertex type index, count)
    out.append(d);
  }
  return out;
}

// The target's keys, and "replication" (None without replica lines).
py::object TargetDict(const Report& r) {
  const std::optional<report::Target>& target = r->compilation.target;
  if (!target) return py::none();
  py::dict d = RecordDict(*target);
  d["replication"] = OptionalRecordDict(target->replication);
  return d;
}

py::list Programs(const Report& r) {
  py::list out;
  for (const report::Program& p : r->compilation.programs) {
    py::dict d = RecordDict(p);
    d["children"] = p.children;
    out.append(d);
  }
  return out;
}

py::list Variables(const Report& r) {
  py::list out;
  for (const report::Variable& v : r->compilation.variables) out.append(RecordDict(v));
  return out;
}

// One member of each record as a NumPy array (a schedule has 10^5 steps
// and more: no Python object per step).
template <typename Record, typename Member>
py::array_t<Member> MemberArray(const std::vector<Record>& records, Member Record::*member) {
  py::array_t<Member> out(static_cast<py::ssize_t>(records.size()));
  auto at = out.template mutable_unchecked<1>();
  for (size_t i = 0; i < records.size(); ++i) at(static_cast<py::ssize_t>(i)) = records[i].*member;
  return out;
}

// The liveness steps as arrays: each step's program index and its
// not-always-live bytes over all tiles, and its fullest tile and that
// tile's bytes when the file has them (format 1.1; None otherwise).
py::dict Liveness(const Report& r) {
  const auto& steps = r->compilation.liveness;
  py::dict d;
  d["program"] = MemberArray(steps, &report::LivenessStep::program);
  d["not_always_live"] = MemberArray(steps, &report::LivenessStep::not_always_live);
  const auto& fullest = r->compilation.liveness_fullest_tiles;
  const bool has_fullest = fullest.size() == steps.size() && !steps.empty();
  d["fullest_tile"] =
      has_fullest ? py::object(MemberArray(fullest, &report::StepTile::tile)) : py::none();
  d["fullest_tile_bytes"] =
      has_fullest ? py::object(MemberArray(fullest, &report::StepTile::not_always_live))
                  : py::none();
  // Format 1.2, more than one IPU: an (IPUs, steps) array of each IPU's bytes.
  const auto& by_ipu = r->compilation.liveness_by_ipu;
  uint32_t ipus = 0;
  for (const report::IpuStep& entry : by_ipu) ipus = std::max(ipus, entry.ipu + 1);
  if (ipus == 0 || steps.empty() || by_ipu.size() != size_t{ipus} * steps.size()) {
    d["by_ipu"] = py::none();
  } else {
    py::array_t<uint64_t> array(
        {static_cast<py::ssize_t>(ipus), static_cast<py::ssize_t>(steps.size())});
    auto at = array.mutable_unchecked<2>();
    for (const report::IpuStep& entry : by_ipu)
      at(entry.ipu, static_cast<py::ssize_t>(entry.step)) = entry.not_always_live;
    d["by_ipu"] = array;
  }
  return d;
}

// A list of each record's dict (always-live and not-always-live variables).
template <typename Record>
py::list RecordDicts(const std::vector<Record>& records) {
  py::list out;
  for (const Record& record : records) out.append(RecordDict(record));
  return out;
}

py::list AlwaysLiveVariables(const Report& r) {
  return RecordDicts(r->compilation.always_live_variables);
}

py::list NotAlwaysLiveVariables(const Report& r) {
  return RecordDicts(r->compilation.not_always_live_variables);
}

// Each operation's dict with the compute sets it owns ("compute_sets").
py::list Operations(const Report& r) {
  const auto& compilation = r->compilation;
  std::vector<py::list> sets(compilation.operations.size());
  for (const report::ComputeSetOperation& link : compilation.compute_set_operations)
    sets.at(link.operation).append(link.compute_set);
  std::vector<py::list> runs(compilation.operations.size());
  for (const report::OperationTiles& run : compilation.operation_tiles)
    runs.at(run.operation).append(py::make_tuple(run.first_tile, run.last_tile, run.vertices));
  py::list out;
  for (size_t i = 0; i < compilation.operations.size(); ++i) {
    py::dict d = RecordDict(compilation.operations[i]);
    d["compute_sets"] = sets[i];
    d["tile_runs"] = runs[i];  // (first tile, last tile, vertices); empty before format 1.2
    out.append(d);
  }
  return out;
}

py::list TileVertexTypes(const Report& r, size_t index) {
  const auto& tiles = r->compilation.tiles;
  if (index >= tiles.size()) throw py::index_error("tile index out of range");
  py::list out;
  for (const report::VertexTypeBytes& v : tiles[index].vertex_types)
    out.append(py::make_tuple(v.type, v.bytes));
  return out;
}

py::object Execution(const Report& r) {
  if (!r->execution) return py::none();
  const report::ExecutionReport& e = *r->execution;
  py::list steps;
  for (const report::ExecutionStep& s : e.steps) {
    py::dict d = RecordDict(s);
    d["cycles_by_tile"] = py::array_t<uint64_t>(static_cast<py::ssize_t>(s.cycles_by_tile.size()),
                                                s.cycles_by_tile.data());
    steps.append(d);
  }
  py::dict d = RecordDict(e);
  d["programs"] = e.programs;
  d["steps"] = steps;
  // Each tile's compute/exchange/sync over the run (a tile-level profile).
  d["tile_cycles"] = RecordDicts(e.tile_cycles);
  return d;
}

// A printed Memory Usage block with the rows the text had: including_gaps,
// excluding_gaps, by_region {label: bytes}, by_category {machine name: bytes}.
py::dict UsageDict(const report::MemoryUsage& usage) {
  const report::MemoryRowsKnown& known = usage.known;
  py::dict d;
  d["including_gaps"] = known.including_gaps ? py::cast(usage.including_gaps) : py::none();
  d["excluding_gaps"] = known.regions.all() ? py::cast(usage.ExcludingGaps()) : py::none();
  py::dict regions, categories;
  for (size_t i = 0; i < report::kNumRegions; ++i) {
    if (known.regions[i])
      regions[py::str(std::string(report::RegionLabel(static_cast<report::Region>(i))))] =
          usage.by_region[i];
  }
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    if (known.categories[c])
      categories[py::str(std::string(
          report::CategoryMachineName(static_cast<report::Category>(c))))] = usage.by_category[c];
  }
  d["by_region"] = regions;
  d["by_category"] = categories;
  return d;
}

// What a text report printed of memory, for reports without per-tile data:
// {"total": usage or None, "tiles": {tile: usage}, "tiles_out_of_memory"}.
py::object PrintedMemory(const Report& r) {
  if (r->HasTiles()) return py::none();
  const report::VerbatimMemory& v = r->compilation.verbatim;
  py::dict tiles;
  for (const report::TileUsage& t : v.tile_blocks) tiles[py::cast(t.tile)] = UsageDict(t.usage);
  py::dict d;
  d["total"] = v.total ? py::object(UsageDict(*v.total)) : py::none();
  d["tiles"] = tiles;
  d["tiles_out_of_memory"] = v.by_tile && v.by_tile->tiles_out_of_memory
                                 ? py::cast(*v.by_tile->tiles_out_of_memory)
                                 : py::none();
  return d;
}

// The analyses print these as --format=json; Python parses the same text.
std::string Json(Expected<analyzer::Output> output) {
  return analyzer::Render(Take(std::move(output)), analyzer::OutputFormat::kJson);
}

}  // namespace
}  // namespace tileprof::python

// One function on purpose: it is the table of every name the Python package
// sees, in the order docs/python.md lists them; splitting it would scatter
// that list.
PYBIND11_MODULE(_tileprof, m) {
  using namespace tileprof;
  using namespace tileprof::python;
  m.doc() = "tileprof's C++ report readers and analyses (use the tileprof package)";
  m.attr("__version__") = TILEPROF_VERSION;
  m.attr("FORMAT_VERSION") =
      py::make_tuple(report::kFormatVersion.major, report::kFormatVersion.minor);
  py::register_exception<ReportError>(m, "ReportError");

  std::vector<std::string> categories, category_labels;
  for (size_t c = 0; c < report::kNumCategories; ++c) {
    categories.emplace_back(report::CategoryMachineName(static_cast<report::Category>(c)));
    category_labels.emplace_back(report::CategoryLabel(static_cast<report::Category>(c)));
  }
  m.attr("CATEGORIES") = categories;
  m.attr("CATEGORY_LABELS") = category_labels;

  py::class_<analyzer::LoadedReport, std::shared_ptr<analyzer::LoadedReport>>(m, "_Report")
      .def_readonly("path", &analyzer::LoadedReport::path)
      .def_property_readonly("format",
                             [](const Report& r) { return analyzer::ReportFormatName(r->format); })
      .def_property_readonly("has_tiles", [](const Report& r) { return r->HasTiles(); })
      .def_property_readonly("target", &TargetDict)
      .def_property_readonly(
          "graph", [](const Report& r) { return OptionalRecordDict(r->compilation.graph); })
      .def_property_readonly("vertex_types",
                             [](const Report& r) {
                               std::vector<std::string> names;
                               for (const auto& t : r->compilation.vertex_types)
                                 names.push_back(t.name);
                               return names;
                             })
      .def("tile_arrays", &TileArrays)
      .def("category_matrix", &CategoryMatrix)
      .def("tile_vertex_types", &TileVertexTypes)
      .def("compute_sets", &ComputeSets)
      .def("programs", &Programs)
      .def("variables", &Variables)
      .def("execution", &Execution)
      .def("printed_memory", &PrintedMemory)
      .def("liveness", &Liveness)
      .def("always_live_variables", &AlwaysLiveVariables)
      .def("not_always_live_variables", &NotAlwaysLiveVariables)
      .def("operations", &Operations);

  m.def("open", &Open, py::arg("path"), "Reads a report in any format (text, JSON, CBOR, SQLite)");
  m.def(
      "hist_json",
      [](const Report& r, bool including_gaps, uint64_t bucket_kb) {
        analyzer::HistogramOptions options;
        options.including_gaps = including_gaps;
        if (bucket_kb > 0) options.bucket_kib = bucket_kb;
        return Json(analyzer::HistogramView(*r, options));
      },
      py::arg("report"), py::arg("including_gaps") = false, py::arg("bucket_kb") = 0);
  m.def(
      "top_json",
      [](const Report& r, size_t count) { return Json(analyzer::TopTilesView(*r, count)); },
      py::arg("report"), py::arg("count"));
  m.def(
      "top_vertex_types_json",
      [](const Report& r, size_t count) { return Json(analyzer::TopVertexTypesView(*r, count)); },
      py::arg("report"), py::arg("count"));
  m.def(
      "compare_json",
      [](const Report& a, const Report& b, size_t count) {
        return Json(analyzer::CompareView(*a, *b, count));
      },
      py::arg("a"), py::arg("b"), py::arg("count"));
  m.def(
      "oom_json",
      [](const Report& r, const std::string& tensor_map, size_t tiles, size_t items) {
        std::optional<std::vector<analyzer::MappedTensor>> tensors;
        if (!tensor_map.empty()) tensors = Take(analyzer::ReadTensorMapFile(tensor_map));
        analyzer::OomOptions options;
        options.worst_tiles = tiles;
        options.items = items;
        return Json(analyzer::OomView(*r, tensors ? &*tensors : nullptr, options));
      },
      py::arg("report"), py::arg("tensor_map") = "", py::arg("tiles") = 5, py::arg("items") = 10);
}
