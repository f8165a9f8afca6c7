// Fuzz target for the HLO text front end (engine/hlo): the input is parsed
// as one or more modules with small limits; whatever parses is printed and
// fingerprinted, so the printer and the canonicaliser see every shape of
// module the parser accepts.
//
// Properties checked besides "no crash, no sanitizer report, no hang":
//  * a rejected input gets a located message naming the source;
//  * printing is a fixed point: the short print at level 0 parses again,
//    prints the same text and has the same fingerprint (printer.h promises
//    Print(Parse(Print(Parse(x)))) == Print(Parse(x)));
//  * the level-3 canonical text parses again with the same fingerprint, as
//    the fingerprint is a hash of that text;
//  * text that skims (skim.h) parses with every other body skipped, or is
//    rejected with a located message, and such a module prints at every level.
// The legacy style is left out: it repeats each operand's shape, so its size
// is not linear in the input and would only slow the fuzzer down.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/hlo/canonical.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/printer.h"
#include "engine/hlo/skim.h"

namespace {

using namespace tileprof::hlo;

void Check(bool condition, const char* what) {
  if (!condition) {
    __builtin_trap();  // a property violation is a finding, like a crash
  }
  (void)what;
}

ParseOptions Limits(const char* name) {
  ParseOptions options;
  options.source_name = name;
  options.max_nesting_depth = 16;
  options.max_input_bytes = 1 << 20;
  return options;
}

std::vector<Module> Reparse(const std::string& text) {
  tileprof::Expected<std::vector<Module>> modules = ParseModules(text, Limits("printed.hlo"));
  Check(modules.has_value(), "printed text parses");
  return modules ? std::move(*modules) : std::vector<Module>{};
}

// The bodies dumpdiff would leave unparsed, here every other one.
void CheckSkipping(const std::string& text) {
  auto spans = SkimComputations(text);
  if (!spans) return;
  ParseOptions options = Limits("fuzz.hlo");
  for (size_t i = 0; i < spans->size(); i += 2)
    options.skip_bodies.emplace_back((*spans)[i].body, (*spans)[i].end);
  tileprof::Expected<Module> module = ParseModule(text, options);
  if (!module) {
    Check(module.error().message().rfind("fuzz.hlo:", 0) == 0, "messages name the source");
    return;
  }
  for (int level = kLevelRaw; level <= kMaxLevel; ++level)
    (void)PrintModule(*module, {.style = PrintStyle::kShort, .level = level});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  CheckSkipping(text);
  tileprof::Expected<std::vector<Module>> modules =
      ParseModules(std::move(text), Limits("fuzz.hlo"));
  if (!modules) {
    Check(modules.error().message().rfind("fuzz.hlo:", 0) == 0, "messages name the source");
    return 0;
  }
  for (const Module& module : *modules) {
    const uint64_t fingerprint = Fingerprint(module);
    Check(FingerprintToString(fingerprint).size() == 18, "0x and 16 hex digits");

    const std::string raw = PrintModule(module, {.style = PrintStyle::kShort, .level = kLevelRaw});
    std::vector<Module> again = Reparse(raw);
    Check(again.size() == 1, "one module prints as one module");
    if (again.size() != 1) continue;
    Check(PrintModule(again[0], {.style = PrintStyle::kShort, .level = kLevelRaw}) == raw,
          "level 0 is a fixed point");
    Check(Fingerprint(again[0]) == fingerprint, "printing keeps the fingerprint");
    (void)PrintModule(module, {.style = PrintStyle::kLong, .level = kLevelRaw});

    const std::string canonical =
        PrintModule(module, {.style = PrintStyle::kShort, .level = kLevelStructure});
    std::vector<Module> canonical_again = Reparse(canonical);
    Check(canonical_again.size() == 1, "the canonical text is one module");
    if (canonical_again.size() == 1)
      Check(Fingerprint(canonical_again[0]) == fingerprint, "level 3 keeps the fingerprint");
  }
  return 0;
}
