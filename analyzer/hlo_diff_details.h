// The pieces hlo_diff.cc words its changes with: where an instruction came
// from, clipped values, and the size substitutions ("32 -> 16") a root-cause
// shape change introduces, by which downstream changes are recognised as
// mere fallout.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "engine/hlo/literal.h"
#include "engine/hlo/module.h"
#include "engine/hlo/shape.h"

namespace tileprof::analyzer::detail {

// `s`, cut to `n` characters with "..." when longer.
std::string Clip(std::string_view s, size_t n = 70);

inline std::string ShapeText(const hlo::Shape& s) { return hlo::ShapeToString(s); }

struct Where {
  std::string op_name, source;
};

// The op_name and "file:line" of an instruction's metadata; empty when absent.
Where WhereOf(const hlo::Instruction* i);

// Attributes that never make a graph different: where it came from.
inline bool IsProvenance(std::string_view name) { return name == "metadata" || name == "origin"; }

// "32 -> 16" replacements that a root-cause shape change introduced, used to
// recognise downstream shapes and attributes that merely follow it (an iota
// of the batch size has no operand to blame).
// Sizes derived from a changed one scale with it (a threefry split in two
// halves 2784 -> 1024 into 1392 -> 512), so element-count ratios count too.
struct Substitutions {
  std::set<std::pair<int64_t, int64_t>> pairs;
  std::set<std::pair<int64_t, int64_t>> ratios;  // (old count, new count)

  bool empty() const { return pairs.empty(); }
  bool Allows(int64_t before, int64_t after) const {
    if (pairs.count({before, after})) return true;
    for (auto [ra, rb] : ratios)
      if (static_cast<__int128>(before) * rb == static_cast<__int128>(after) * ra) return true;
    return false;
  }
};

void AddSubstitutions(const hlo::Shape& a, const hlo::Shape& b, Substitutions& subst);

// True when `after` is `before` with some numbers replaced as `subst` allows.
bool FollowsSubstitutions(std::string_view before, std::string_view after,
                          const Substitutions& subst);

// "batch dimension 32 -> 16", "element type f32 -> f16", ...
std::string ParameterDetail(const hlo::Shape& a, const hlo::Shape& b);

// "3 of 8 element(s) differ; first at [0,2]: 1 -> 5", or "" when not an array change.
std::string ConstantDetail(const hlo::Literal& a, const hlo::Literal& b);

}  // namespace tileprof::analyzer::detail
