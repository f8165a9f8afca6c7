// Rebuilding executables from their bytes. See executable.h for the layout.
#include "engine/exec/executable.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "engine/exec/executable_format.h"
#include "engine/exec/executable_reader.h"
#include "reports/cbor_codec.h"

namespace tileprof::engine::exec {
namespace {

using format::Header;
using format::ReadHeader;
using format::Section;
using read_internal::Reader;

ExecutableInfo ReadInfo(Reader& outer, const Header& header) {
  ExecutableInfo info;
  info.format_version = header.version;
  info.key = header.key;
  Reader r = outer.Sub(Section::kInfo, "info section");
  info.tool_version = r.Str("tool version");
  info.module_name = r.Str("module name");
  info.fingerprint = r.Fixed64("fingerprint");
  info.target.preset = r.Str("target preset");
  info.target.num_ipus = r.U32Var("number of IPUs");
  if (uint32_t tiles = r.U32Var("tiles per IPU"); tiles != 0) info.target.tiles_per_ipu = tiles;
  info.key_text = r.Str("key text");
  for (uint64_t i = 0, n = r.Count("input streams"); r.ok() && i < n; ++i)
    info.input_streams.push_back(r.Str("input stream"));
  for (uint64_t i = 0, n = r.Count("output streams"); r.ok() && i < n; ++i)
    info.output_streams.push_back(r.Str("output stream"));
  r.End("info section");
  outer.Adopt(r);
  return info;
}

// A variable's kind byte; a valueless one is listed in `result` (as the
// compile listed it) under the id it is about to get.

// GraphStats::by_codelet as stored: codelets by name until the graph that
// owns them is rebuilt.
struct NamedCodeletUsage {
  std::string name;
  CodeletUsage usage;
};

void ReadLowering(Reader& outer, compiler::CompileResult& result,
                  std::vector<NamedCodeletUsage>& by_codelet) {
  compiler::LoweringStats& s = result.lowering;
  Reader r = outer.Sub(Section::kLowering, "lowering section");
  s.instructions = r.Var("instructions");
  s.opaque_ops = r.Var("opaque ops");
  s.exchanges = r.Var("exchanges");
  s.program_steps = r.Var("program steps");
  for (uint64_t i = 0, n = r.Count("opaque opcodes"); r.ok() && i < n; ++i)
    s.opaque_opcodes.push_back(r.Str("opaque opcode"));
  for (uint64_t i = 0, n = r.Count("valueless constants"); r.ok() && i < n; ++i)
    s.constants_without_values.push_back(r.Str("valueless constant"));
  result.tiles_out_of_memory = r.Var("tiles out of memory");
  GraphStats& g = result.graph_stats;
  for (uint64_t* value :
       {&g.num_variables, &g.num_constants, &g.variable_bytes, &g.constant_bytes,
        &g.num_compute_sets, &g.num_vertices, &g.num_edges, &g.num_streams, &g.edge_pointer_bytes,
        &g.internal_state_bytes, &g.vertex_code_bytes, &g.tiles_used})
    *value = r.Var("graph statistics");
  for (uint64_t i = 0, n = r.Count("codelet usage count", 5); r.ok() && i < n; ++i) {
    NamedCodeletUsage named;
    named.name = r.Str("codelet usage name");
    named.usage.vertices = r.Var("codelet usage vertices");
    named.usage.edges = r.Var("codelet usage edges");
    named.usage.state_bytes = r.Var("codelet usage state bytes");
    named.usage.tiles = r.Var("codelet usage tiles");
    by_codelet.push_back(std::move(named));
  }
  r.End("lowering section");
  outer.Adopt(r);
}

// `r` is the report section's own reader.
Expected<report::CompilationReport> ReadReport(Reader& r, std::string_view source) {
  auto bytes = r.Bytes(r.remaining(), "report");
  if (!r.ok()) return Error(r.error());
  TILEPROF_ASSIGN_OR_RETURN(
      report::ReportDocument document,
      report::ReadCborReport(bytes, fmt::format("{} (embedded report)", source)));
  if (!document.compilation) return Error("the embedded report has no compilation part");
  return std::move(*document.compilation);
}

}  // namespace

Status VerifyExecutable(std::span<const uint8_t> bytes, std::string_view source) {
  TILEPROF_ASSIGN_OR_RETURN(Header header, ReadHeader(bytes, source));
  (void)header;
  return {};
}

Expected<ExecutableInfo> ReadExecutableInfo(std::span<const uint8_t> bytes, std::string_view source,
                                            bool verify_checksum) {
  TILEPROF_ASSIGN_OR_RETURN(
      Header header,
      ReadHeader(bytes, source, verify_checksum ? format::Verify::kAll : format::Verify::kNone));
  Reader r(header.payload, kExecutableHeaderBytes);
  ExecutableInfo info = ReadInfo(r, header);
  if (!r.ok()) return Error(fmt::format("{}: corrupted executable: {}", source, r.error()));
  return info;
}

Expected<Executable> format::DeserializePayload(const Header& header, std::string_view source,
                                                LoadParts parts) {
  const auto corrupted = [&](const Error& error) {
    return Error(fmt::format("{}: corrupted executable: {}", source, error.message()));
  };
  Reader r(header.payload, kExecutableHeaderBytes);
  ExecutableInfo info = ReadInfo(r, header);
  if (!r.ok()) return corrupted(Error(r.error()));
  auto target = Target::Create(info.target);
  if (!target) return corrupted(target.error().Within("target"));

  compiler::CompileResult result;
  std::vector<NamedCodeletUsage> by_codelet;
  ReadLowering(r, result, by_codelet);
  if (!r.ok()) return corrupted(Error(r.error()));
  // The report decodes on another thread while the graph is rebuilt.
  Reader report_reader = r.Sub(Section::kReport, "report section");
  if (!r.ok()) return corrupted(Error(r.error()));
  const bool graph = parts == LoadParts::kAll ||
                     (parts == LoadParts::kRunnable && result.tiles_out_of_memory == 0);
  std::future<Expected<report::CompilationReport>> report =
      std::async(graph ? std::launch::async : std::launch::deferred,
                 [&report_reader, source] { return ReadReport(report_reader, source); });
  if (graph) {
    result.graph = std::make_unique<Graph>(*target);
    compiler::CompilerCodelets compiler_codelets(*result.graph);
    std::vector<const Codelet*> codelets;
    Status built = read_internal::ReadGraph(r, result, compiler_codelets, codelets);
    if (built) {
      auto program = read_internal::ReadProgram(r);
      if (program)
        result.program = std::move(*program);
      else
        built = program.error();
    }
    if (built && r.U8("end marker") != static_cast<uint8_t>(Section::kEnd))
      r.Fail("end marker", "missing");
    r.End("end marker");
    if (built && !r.ok()) built = Error(r.error());
    if (built) built = program::ValidateProgram(*result.graph, result.program);
    // The stored statistics, with their codelets resolved in the new graph
    // (Graph::Stats() would walk every vertex again).
    for (const NamedCodeletUsage& named : by_codelet) {
      if (!built) break;
      auto it = std::find_if(codelets.begin(), codelets.end(),
                             [&](const Codelet* codelet) { return codelet->name() == named.name; });
      if (it == codelets.end()) {
        built =
            Error(fmt::format("graph statistics: codelet '{}' is not in the graph", named.name));
        break;
      }
      result.graph_stats.by_codelet.push_back(named.usage);
      result.graph_stats.by_codelet.back().codelet = *it;
    }
    if (!built) {
      report.wait();
      return corrupted(built.error());
    }
  }
  Expected<report::CompilationReport> decoded = report.get();
  if (!decoded) return corrupted(decoded.error());
  result.report = std::move(*decoded);
  Executable executable{std::move(info), std::move(result), *target};
  return executable;
}

Expected<Executable> DeserializeExecutable(std::span<const uint8_t> bytes, std::string_view source,
                                           LoadParts parts) {
  TILEPROF_ASSIGN_OR_RETURN(
      Header header,
      ReadHeader(bytes, source,
                 parts == LoadParts::kReport ? format::Verify::kHead : format::Verify::kAll));
  return format::DeserializePayload(header, source, parts);
}

}  // namespace tileprof::engine::exec
