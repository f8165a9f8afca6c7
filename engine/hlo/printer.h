// The HLO printer: short and long styles (plus the legacy long style with
// operand shapes), at any normalisation level of canonical.h.
//
//   short   add.3 = f32[2]{0} add(a, b), metadata={...}
//           comp {
//   long    %add.3 = f32[2]{0} add(%a, %b), metadata={...}
//           %comp (a: f32[2], b: f32[2]) -> f32[2] {
//   legacy  %add.3 = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b)
//
// Every level below 5 prints parsable text, and printing is a fixed point:
// Print(Parse(Print(Parse(x)))) == Print(Parse(x)) for any style and level.
// At level 0 the text keeps what was written (names, attribute values,
// literal spelling, header attributes, order); the style only decides the
// sigils, operand shapes, program shapes and index comments.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/hlo/module.h"

namespace tileprof::hlo {

enum class PrintStyle : uint8_t {
  kShort,   // HloPrintOptions::ShortParsable(): no '%', no program shapes
  kLong,    // HloPrintOptions(): '%' names, program shapes, /*index=N*/
  kLegacy,  // long plus operand shapes, as TF-era dumps print
};

struct PrintOptions {
  PrintStyle style = PrintStyle::kShort;
  int level = 0;  // 0..5, see canonical.h
};

// Where printed text goes: a string, a hash (fingerprint.h), a file.
class TextSink {
 public:
  virtual ~TextSink() = default;
  virtual void Append(std::string_view text) = 0;
};

class StringSink : public TextSink {
 public:
  void Append(std::string_view text) override { text_.append(text); }
  std::string& text() { return text_; }

 private:
  std::string text_;
};

void PrintModule(const Module& module, const PrintOptions& options, TextSink* sink);
std::string PrintModule(const Module& module, const PrintOptions& options = {});

// Several modules separated by "// -----" lines, which ParseModules splits
// again.
std::string PrintModules(std::span<const Module> modules, const PrintOptions& options = {});

// "short", "long", "legacy" -> style.
std::optional<PrintStyle> PrintStyleFromName(std::string_view name);

}  // namespace tileprof::hlo
