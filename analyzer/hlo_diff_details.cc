#include "analyzer/hlo_diff_details.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "engine/hlo/attributes.h"

namespace tileprof::analyzer::detail {
namespace {

// Splits text into digit runs and the rest: "[0:32]" -> "[", 0, ":", 32, "]".
void Tokens(std::string_view s, std::string& shape, std::vector<int64_t>& numbers) {
  for (size_t i = 0; i < s.size();) {
    if (s[i] >= '0' && s[i] <= '9') {
      int64_t v = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        v = v < (INT64_MAX / 10) ? v * 10 + (s[i] - '0') : v;
        ++i;
      }
      numbers.push_back(v);
      shape += '#';
    } else {
      shape += s[i++];
    }
  }
}

}  // namespace

std::string Clip(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  return std::string(s.substr(0, n - 3)) + "...";
}

Where WhereOf(const hlo::Instruction* i) {
  Where w;
  if (!i) return w;
  const hlo::Attribute* attr = i->FindAttribute("metadata");
  if (!attr) return w;
  auto m = hlo::ParseMetadata(attr->value());
  if (!m) return w;
  w.op_name = m->op_name;
  if (!m->source_file.empty())
    w.source =
        m->source_line >= 0 ? fmt::format("{}:{}", m->source_file, m->source_line) : m->source_file;
  return w;
}

void AddSubstitutions(const hlo::Shape& a, const hlo::Shape& b, Substitutions& subst) {
  if (a.rank() == b.rank()) {
    for (int64_t d = 0; d < a.rank(); ++d)
      if (a.dimensions[d] != b.dimensions[d])
        subst.pairs.insert({a.dimensions[d], b.dimensions[d]});
  }
  auto ea = a.ElementCount(), eb = b.ElementCount();
  if (ea && eb && *ea != *eb && *ea > 0 && *eb > 0) {
    subst.pairs.insert({*ea, *eb});
    subst.ratios.insert({*ea, *eb});
  }
  for (size_t i = 0; i < std::min(a.tuple_shapes.size(), b.tuple_shapes.size()); ++i)
    AddSubstitutions(a.tuple_shapes[i], b.tuple_shapes[i], subst);
}

bool FollowsSubstitutions(std::string_view before, std::string_view after,
                          const Substitutions& subst) {
  std::string sa, sb;
  std::vector<int64_t> na, nb;
  Tokens(before, sa, na);
  Tokens(after, sb, nb);
  if (sa != sb || na.size() != nb.size()) return false;
  for (size_t i = 0; i < na.size(); ++i)
    if (na[i] != nb[i] && !subst.Allows(na[i], nb[i])) return false;
  return true;
}

std::string ParameterDetail(const hlo::Shape& a, const hlo::Shape& b) {
  if (a.element_type != b.element_type)
    return fmt::format("element type {} -> {}", hlo::PrimitiveTypeName(a.element_type),
                       hlo::PrimitiveTypeName(b.element_type));
  if (a.rank() != b.rank()) return fmt::format("rank {} -> {}", a.rank(), b.rank());
  std::vector<std::string> dims;
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (a.dimensions[d] == b.dimensions[d]) continue;
    dims.push_back(fmt::format("{} {} -> {}",
                               d == 0 ? "batch dimension" : fmt::format("dimension {}", d),
                               a.dimensions[d], b.dimensions[d]));
  }
  if (!dims.empty()) return fmt::format("{}", fmt::join(dims, ", "));
  if (a.dynamic_dimensions != b.dynamic_dimensions) return "dynamic dimensions changed";
  if (!(a.layout == b.layout)) return "layout changed";
  return "";
}

std::string ConstantDetail(const hlo::Literal& a, const hlo::Literal& b) {
  auto count = [](const hlo::Literal& l) {
    return std::max({l.integers.size(), l.unsigneds.size(), l.reals.size()});
  };
  size_t n = std::min(count(a), count(b));
  if (count(a) != count(b) || n <= 1) return "";
  size_t differing = 0, first = n;
  for (size_t i = 0; i < n; ++i) {
    bool same = true;
    if (i < a.reals.size() && i < b.reals.size())
      same = a.reals[i] == b.reals[i] || (a.reals[i] != a.reals[i] && b.reals[i] != b.reals[i]);
    else if (i < a.integers.size() && i < b.integers.size())
      same = a.integers[i] == b.integers[i];
    else if (i < a.unsigneds.size() && i < b.unsigneds.size())
      same = a.unsigneds[i] == b.unsigneds[i];
    if (!same) {
      ++differing;
      first = std::min(first, i);
    }
  }
  if (differing == 0) return "";
  // Row-major index of the first difference, as [i,j,...].
  std::vector<int64_t> index(a.dimensions.size());
  size_t rest = first;
  for (size_t d = a.dimensions.size(); d-- > 0;) {
    int64_t extent = std::max<int64_t>(1, a.dimensions[d]);
    index[d] = static_cast<int64_t>(rest % static_cast<size_t>(extent));
    rest /= static_cast<size_t>(extent);
  }
  auto value = [&](const hlo::Literal& l) -> std::string {
    if (first < l.reals.size()) {
      std::string s;
      hlo::AppendFloat(&s, l.reals[first], l.element_type);
      return s;
    }
    if (first < l.integers.size()) return std::to_string(l.integers[first]);
    return std::to_string(l.unsigneds[first]);
  };
  return fmt::format("{} of {} element(s) differ; first at [{}]: {} -> {}", differing, n,
                     fmt::join(index, ","), value(a), value(b));
}

}  // namespace tileprof::analyzer::detail
