// The HLO printer; see printer.h, canonical.h and
// ../shared/spec/hlo-text.md sections 1 and 3 (print order).
#include "engine/hlo/printer.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

#include "engine/hlo/attributes.h"
#include "engine/hlo/canonical.h"
#include "engine/hlo/literal.h"

namespace tileprof::hlo {
namespace {

// XLA's header order; other attributes follow by name.
int HeaderRank(std::string_view name) {
  static constexpr std::string_view kOrder[] = {
      "is_scheduled",
      "input_output_alias",
      "buffer_donor",
      "alias_passthrough_params",
      "entry_computation_layout",
      "allow_spmd_sharding_propagation_to_parameters",
      "allow_spmd_sharding_propagation_to_output",
      "replica_count",
      "num_partitions",
      "frontend_attributes",
  };
  for (size_t i = 0; i < std::size(kOrder); ++i)
    if (kOrder[i] == name) return static_cast<int>(i);
  return static_cast<int>(std::size(kOrder));
}

// Drops `metadata={...}` from inside a value (shardings carry one).
std::string StripNestedMetadata(std::string_view normalized) {
  size_t at = normalized.find("metadata={");
  if (at == std::string_view::npos) return std::string(normalized);
  std::string out(normalized.substr(0, at));
  size_t depth = 0, i = at + 9;
  bool in_string = false;
  for (; i < normalized.size(); ++i) {
    char c = normalized[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) break;
  }
  std::string rest(normalized.substr(std::min(i + 1, normalized.size())));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (!rest.empty() && rest.front() == ' ' && (out.empty() || out.back() == '{')) rest.erase(0, 1);
  return StripNestedMetadata(out + rest);
}

class ModulePrinter {
 public:
  ModulePrinter(const Module& module, const PrintOptions& options, TextSink* sink)
      : module_(module),
        sink_(sink),
        level_(std::clamp(options.level, 0, kMaxLevel)),
        long_(options.style != PrintStyle::kShort),
        legacy_(options.style == PrintStyle::kLegacy) {}

  void Print() {
    if (level_ >= kLevelSignature) {
      PrintSignatureOnly();
    } else {
      PrintHeader();
      orders_ = CanonicalModuleOrders(module_, level_);
      const std::vector<const Computation*>& order = orders_.computations;
      NameComputations(order);
      for (size_t i = 0; i < order.size(); ++i) {
        out_.append("\n");
        PrintComputation(*order[i]);
        Flush(false);
      }
    }
    Flush(true);
  }

 private:
  // Small chunks: a hash sink (fingerprint.h) then needs no megabyte buffer
  // whose every page faults in once per print.
  static constexpr size_t kChunk = 1 << 16;

  void Flush(bool force) {
    if (!force && out_.size() < kChunk) return;
    sink_->Append(out_);
    out_.clear();
  }

  void AppendInt(int64_t value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out_.append(buffer, end);
  }

  void AppendShape(const Shape& shape, bool layout = true) {
    ShapePrintOptions shape_options;
    shape_options.print_layout = layout;
    shape_options.index_comments = long_;
    hlo::AppendShape(&out_, shape, shape_options);
  }

  // ---- names

  void NameComputations(const std::vector<const Computation*>& order) {
    computation_names_.assign(module_.computations().size(), {});
    if (level_ == kLevelNames) {
      std::unordered_set<std::string> used;
      std::unordered_map<std::string, int> next_suffix;
      for (const Computation* computation : module_.computations())
        computation_names_[computation->index()] =
            Uniquify(StripNumericSuffix(computation->name()), &used, &next_suffix);
    } else if (level_ >= kLevelStructure) {
      for (size_t i = 0; i < order.size(); ++i)
        computation_names_[order[i]->index()] = "comp_" + std::to_string(i);
    }
  }

  static std::string Uniquify(std::string_view base, std::unordered_set<std::string>* used,
                              std::unordered_map<std::string, int>* next_suffix) {
    std::string candidate(base);
    int& next = (*next_suffix)[candidate];
    while (!used->insert(candidate).second)
      candidate = std::string(base) + "." + std::to_string(++next);
    return candidate;
  }

  void NameInstructions(const Computation& computation,
                        const std::vector<const Instruction*>& order) {
    if (level_ == kLevelNames) {
      instruction_names_.assign(computation.instructions().size(), {});
      std::unordered_set<std::string> used;
      std::unordered_map<std::string, int> next_suffix;
      for (const Instruction* instruction : order)
        instruction_names_[instruction->index()] =
            Uniquify(StripNumericSuffix(instruction->name()), &used, &next_suffix);
    } else if (level_ >= kLevelStructure) {
      instruction_ranks_.assign(computation.instructions().size(), 0);
      for (size_t i = 0; i < order.size(); ++i)
        instruction_ranks_[order[i]->index()] = static_cast<uint32_t>(i);
    }
  }

  // A name may start with a digit ("%0"); without its '%' it would lex as a
  // number, so it keeps the sigil even in the short style.
  void AppendName(std::string_view name) {
    if (long_ || (!name.empty() && name.front() >= '0' && name.front() <= '9')) out_.push_back('%');
    out_.append(name);
  }

  void AppendInstructionName(const Instruction& instruction) {
    if (level_ < kLevelNames) {
      AppendName(instruction.name());
    } else if (level_ == kLevelNames) {
      AppendName(instruction_names_[instruction.index()]);
    } else {
      if (long_) out_.push_back('%');
      out_.append("tmp_");
      AppendInt(instruction_ranks_[instruction.index()]);
    }
  }

  void AppendComputationName(const Computation& computation) {
    AppendName(level_ < kLevelNames ? computation.name()
                                    : std::string_view(computation_names_[computation.index()]));
  }

  // ---- module

  void PrintHeader() {
    out_.append("HloModule ");
    if (level_ >= kLevelStructure) {
      out_.append("module");
    } else {
      out_.append(level_ == kLevelNames ? StripNumericSuffix(module_.name()) : module_.name());
    }
    std::vector<const Attribute*> attributes;
    for (const Attribute& attribute : module_.attributes()) attributes.push_back(&attribute);
    if (level_ >= kLevelCosmetic) {
      std::stable_sort(attributes.begin(), attributes.end(),
                       [](const Attribute* a, const Attribute* b) {
                         int ra = HeaderRank(a->name()), rb = HeaderRank(b->name());
                         return ra != rb ? ra < rb : a->name() < b->name();
                       });
    }
    for (const Attribute* attribute : attributes) {
      out_.append(", ");
      out_.append(attribute->name());
      out_.push_back('=');
      AppendValue(attribute->value());
    }
    out_.append("\n");
    if (level_ < kLevelNames && !module_.stack_frames().empty()) PrintStackFrames();
  }

  void AppendValue(std::string_view value, bool sharding = false) {
    if (level_ == kLevelRaw) {
      out_.append(value);
    } else if (sharding && level_ >= kLevelNames &&
               value.find("metadata=") != std::string_view::npos) {
      out_.append(StripNestedMetadata(NormalizeAttributeValue(value)));
    } else {
      out_.append(NormalizeAttributeValue(value));
    }
  }

  void PrintStackFrames() {
    const StackFrameTables& tables = module_.stack_frames();
    const std::pair<std::string_view, const std::vector<StackFrameTables::Entry>*> sections[] = {
        {"FileNames", &tables.file_names},
        {"FunctionNames", &tables.function_names},
        {"FileLocations", &tables.file_locations},
        {"StackFrames", &tables.stack_frames},
    };
    for (const auto& [title, entries] : sections) {
      if (entries->empty()) continue;
      out_.append("\n");
      out_.append(title);
      out_.append("\n");
      for (const StackFrameTables::Entry& entry : *entries) {
        AppendInt(entry.id);
        out_.push_back(' ');
        AppendValue(entry.value);
        out_.append("\n");
      }
    }
  }

  void AppendHeaderLine(const Computation& computation) {
    std::string_view text = computation.skipped_text();
    out_.append(text.substr(0, text.find('\n')));
  }

  void PrintExecutionThread(const Computation& computation) {
    if (computation.execution_thread().empty()) return;
    out_.append(", execution_thread=\"");
    out_.append(computation.execution_thread());
    out_.append("\"");
  }

  void PrintSignatureOnly() {
    const Computation& entry = *module_.entry();
    if (entry.body_skipped()) {  // the same bytes in both: its header stands in for it
      AppendHeaderLine(entry);
      out_.append("\n");
      return;
    }
    out_.push_back('(');
    bool first = true;
    for (const Instruction* parameter : entry.parameters()) {
      if (!first) out_.append(", ");
      first = false;
      AppendShape(parameter->shape());
    }
    out_.append(") -> ");
    AppendShape(entry.root()->shape());
    out_.append("\n");
  }

  // ---- computations

  void PrintComputation(const Computation& computation) {
    if (computation.body_skipped()) {
      // Its text is the same bytes in the module it is compared with, so its
      // header as written can stand in for it.
      AppendHeaderLine(computation);
      out_.append(" ...}");
      PrintExecutionThread(computation);
      out_.append("\n");
      return;
    }
    const std::vector<const Instruction*>& order = orders_.instructions[computation.index()];
    NameInstructions(computation, order);
    if (computation.is_entry()) out_.append("ENTRY ");
    AppendComputationName(computation);
    if (long_) AppendSignature(computation);
    out_.append(" {\n");
    for (const Instruction* instruction : order) {
      PrintInstruction(*instruction);
      if (out_.size() >= kChunk) Flush(false);
    }
    out_.append("}");
    PrintExecutionThread(computation);
    out_.append("\n");
  }

  void AppendSignature(const Computation& computation) {
    out_.push_back(' ');
    if (level_ == kLevelRaw && computation.signature()) {
      // As written: the names and shapes of old headers need not match the
      // parameters (hand-written tests disagree with themselves).
      const ProgramSignature& signature = *computation.signature();
      out_.push_back('(');
      for (size_t i = 0; i < signature.parameters.size(); ++i) {
        if (i > 0) out_.append(", ");
        if (i > 0 && i % 5 == 0) {
          out_.append("/*index=");
          AppendInt(static_cast<int64_t>(i));
          out_.append("*/");
        }
        out_.append(signature.parameters[i].name);
        out_.append(": ");
        AppendShape(*signature.parameters[i].shape);
      }
      out_.append(") -> ");
      AppendShape(*signature.result);
      return;
    }
    out_.push_back('(');
    const auto parameters = computation.parameters();
    for (size_t i = 0; i < parameters.size(); ++i) {
      if (i > 0) out_.append(", ");
      if (i > 0 && i % 5 == 0) {
        out_.append("/*index=");
        AppendInt(static_cast<int64_t>(i));
        out_.append("*/");
      }
      bool saved = long_;
      long_ = false;  // no '%' before parameter names in the header
      AppendInstructionName(*parameters[i]);
      long_ = saved;
      out_.append(": ");
      AppendShape(parameters[i]->shape(), /*layout=*/false);
    }
    out_.append(") -> ");
    AppendShape(computation.root()->shape(), /*layout=*/false);
  }

  void PrintInstruction(const Instruction& instruction) {
    out_.append(instruction.is_root() ? "  ROOT " : "  ");
    AppendInstructionName(instruction);
    out_.append(" = ");
    AppendShape(instruction.shape());
    out_.push_back(' ');
    if (auto wrapped = instruction.async_wrapped_opcode()) {
      out_.append(OpcodeName(*wrapped));
      out_.append(instruction.opcode() == Opcode::kAsyncStart    ? "-start"
                  : instruction.opcode() == Opcode::kAsyncUpdate ? "-update"
                                                                 : "-done");
    } else {
      out_.append(OpcodeName(instruction.opcode()));
    }
    out_.push_back('(');
    if (instruction.opcode() == Opcode::kParameter) {
      AppendInt(instruction.parameter_number());
    } else if (instruction.opcode() == Opcode::kConstant) {
      AppendLiteralText(instruction);
    } else {
      const auto operands = instruction.operands();
      for (size_t i = 0; i < operands.size(); ++i) {
        if (i > 0) out_.append(", ");
        if (long_ && i > 0 && i % 5 == 0) {
          out_.append("/*index=");
          AppendInt(static_cast<int64_t>(i));
          out_.append("*/");
        }
        if (legacy_) {
          AppendShape(operands[i]->shape());
          out_.push_back(' ');
        }
        AppendInstructionName(*operands[i]);
      }
    }
    out_.push_back(')');
    if (level_ == kLevelRaw) {
      for (const Attribute& attribute : instruction.attributes())
        AppendAttribute(instruction, attribute);
    } else {
      for (const Attribute* attribute : CanonicalAttributeOrder(instruction))
        if (KeepsAttribute(attribute->name(), level_)) AppendAttribute(instruction, *attribute);
    }
    out_.push_back('\n');
  }

  void AppendLiteralText(const Instruction& instruction) {
    if (level_ == kLevelRaw) {
      out_.append(instruction.literal());
      return;
    }
    Expected<Literal> literal = ParseLiteral(instruction.literal(), instruction.shape());
    if (!literal) {  // not reachable for a parsed module
      out_.append(instruction.literal());
      return;
    }
    AppendLiteral(&out_, *literal, {.elide_floating = level_ >= kLevelConfig});
  }

  void AppendAttribute(const Instruction& instruction, const Attribute& attribute) {
    out_.append(", ");
    out_.append(attribute.name());
    out_.push_back('=');
    switch (attribute.kind()) {
      case AttributeKind::kRaw:
        AppendValue(attribute.value(), attribute.name() == "sharding");
        return;
      case AttributeKind::kComputation:
        AppendComputationName(*instruction.called_computations()[attribute.first()]);
        return;
      case AttributeKind::kComputationList:
      case AttributeKind::kControlPredecessors: {
        out_.push_back('{');
        for (uint32_t i = 0; i < attribute.count(); ++i) {
          if (i > 0) out_.append(", ");
          if (attribute.kind() == AttributeKind::kComputationList) {
            AppendComputationName(*instruction.called_computations()[attribute.first() + i]);
          } else {
            AppendInstructionName(*instruction.control_predecessors()[attribute.first() + i]);
          }
        }
        out_.push_back('}');
        return;
      }
    }
  }

  const Module& module_;
  TextSink* sink_;
  const int level_;
  bool long_;
  const bool legacy_;
  std::string out_;
  CanonicalOrders orders_;
  std::vector<std::string> computation_names_;
  std::vector<std::string> instruction_names_;
  std::vector<uint32_t> instruction_ranks_;
};

}  // namespace

void PrintModule(const Module& module, const PrintOptions& options, TextSink* sink) {
  ModulePrinter printer(module, options, sink);
  printer.Print();
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  StringSink sink;
  PrintModule(module, options, &sink);
  return std::move(sink.text());
}

std::string PrintModules(std::span<const Module> modules, const PrintOptions& options) {
  StringSink sink;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (i > 0) sink.Append("\n// -----\n\n");
    PrintModule(modules[i], options, &sink);
  }
  return std::move(sink.text());
}

std::optional<PrintStyle> PrintStyleFromName(std::string_view name) {
  if (name == "short") return PrintStyle::kShort;
  if (name == "long") return PrintStyle::kLong;
  if (name == "legacy") return PrintStyle::kLegacy;
  return std::nullopt;
}

}  // namespace tileprof::hlo
