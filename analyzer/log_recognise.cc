// The message level of `tileprof logscan`: one clean frame (log_lines.h) to
// at most one event. Each recogniser names where its wording comes from;
// phrases are matched anywhere in the message, so prefixes this file does
// not know still work. log_lines.cc MayHoldEvent must know the fixed part of
// every phrase here.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "analyzer/log_lines.h"
#include "analyzer/log_scan.h"

namespace tileprof::analyzer {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::string_view> After(std::string_view text, std::string_view marker) {
  size_t at = text.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  return text.substr(at + marker.size());
}

// A decimal number at the start of `s` ("607", "0.586426", "1,024.5").
std::optional<double> LeadingNumber(std::string_view s, size_t* used = nullptr) {
  std::string digits;
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          (s[i] == ',' && i > 0))) {
    if (s[i] != ',') digits += s[i];
    ++i;
  }
  if (digits.empty() || digits == ".") return std::nullopt;
  if (used) *used = i;
  return std::strtod(digits.c_str(), nullptr);
}

struct Unit {
  std::string_view prefix;  // of the unit's name, tried in order
  double scale;             // to the wanted unit
};

// "<n> <unit>" in the wanted unit; a unit not listed counts as the wanted one.
std::optional<double> Quantity(std::string_view s, std::initializer_list<Unit> units) {
  s = Trim(s);
  size_t used = 0;
  std::optional<double> value = LeadingNumber(s, &used);
  if (!value) return std::nullopt;
  std::string_view name = Trim(s.substr(used));
  for (const Unit& unit : units)
    if (name.starts_with(unit.prefix)) return *value * unit.scale;
  return *value;
}

// Poplar's "MB" are mebibytes (it prints MiB since SDK 3).
std::optional<double> Megabytes(std::string_view s) {
  return Quantity(s, {{"G", 1024}, {"K", 1.0 / 1024}, {"k", 1.0 / 1024}, {"B", 1.0 / 1048576}});
}

std::optional<double> Milliseconds(std::string_view s) {
  return Quantity(s, {{"ms", 1}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"s", 1000}});
}

// "(duration 30 ms; diff RSS: 16.4961 MB; total RSS: 2440.24 MB)" (Poplar
// SDK 1-2, B01/B08); fields may be missing or in another order.
void PhaseFigures(std::string_view figures, LogEvent& e) {
  size_t start = 0;
  while (start < figures.size()) {
    size_t end = figures.find(';', start);
    if (end == std::string_view::npos) end = figures.size();
    std::string_view field = Trim(figures.substr(start, end - start));
    if (auto rest = After(field, "duration")) {
      if (auto ms = Milliseconds(*rest)) e.seconds = *ms / 1000;
    } else if (auto diff = After(field, "diff RSS:")) {
      e.rss_diff_mb = Megabytes(*diff);
    } else if (auto total = After(field, "total RSS:")) {
      e.rss_total_mb = Megabytes(*total);
    }
    start = end + 1;
  }
}

// "HH:MM:SS.d" (TensorFlow's bar), "MM:SS" or "H:MM:SS" (tqdm) in seconds.
std::optional<double> Elapsed(std::string_view s) {
  double total = 0;
  int fields = 0;
  size_t pos = 0;
  while (pos <= s.size() && fields < 3) {
    size_t used = 0;
    std::optional<double> value = LeadingNumber(s.substr(pos), &used);
    if (!value) break;
    total = total * 60 + *value;
    ++fields;
    pos += used;
    if (pos >= s.size() || s[pos] != ':') break;
    ++pos;
  }
  return fields >= 2 ? std::optional<double>(total) : std::nullopt;
}

// The percentage just before `percent_at` ("  84" of "  84%").
std::optional<double> PercentBefore(std::string_view s, size_t percent_at) {
  size_t start = percent_at;
  while (start > 0 &&
         (std::isdigit(static_cast<unsigned char>(s[start - 1])) || s[start - 1] == '.'))
    --start;
  if (start == percent_at) return std::nullopt;
  return LeadingNumber(s.substr(start, percent_at - start));
}

bool IsCacheFile(std::string_view path) {
  for (std::string_view ext : {".poplar_exec", ".xla_engine", ".popef"})
    if (path.ends_with(ext)) return true;
  return false;
}

std::string_view FrameworkOf(std::string_view module) {
  return module.starts_with("jit_") || module.starts_with("pmap_") ? "jax" : "tensorflow";
}

// "<module>  (Hash: 0xABC) for ordinal  0" (spec executable-cache.md 5).
void ModuleAndHash(std::string_view rest, LogEvent& e) {
  size_t paren = rest.find("(Hash");
  e.module = Trim(rest.substr(0, paren));
  e.framework = FrameworkOf(e.module);
  if (paren == std::string_view::npos) return;
  size_t hex = rest.find("0x", paren);
  if (hex == std::string_view::npos) return;
  size_t end = hex + 2;
  while (end < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[end]))) ++end;
  e.hash = rest.substr(hex, end - hex);
}

// Poplar phases: "Starting phase: X", "Ending phase: X (duration ...)".
bool Phase(std::string_view m, LogEvent& e) {
  if (auto rest = After(m, "Starting phase: ")) {
    e.kind = LogEventKind::kPhaseStart;
    e.phase = Trim(*rest);
  } else if (auto rest = After(m, "Ending phase: ")) {
    e.kind = LogEventKind::kPhaseEnd;
    size_t paren = rest->rfind(" (");
    e.phase = Trim(rest->substr(0, paren));
    if (paren != std::string_view::npos) {
      std::string_view figures = rest->substr(paren + 2);
      if (figures.ends_with(")")) figures.remove_suffix(1);
      PhaseFigures(figures, e);
    }
  } else {
    return false;
  }
  e.framework = "poplar";
  return true;
}

// Poplar SDK 3.3 moved phase timings to PO:PERF lines. No published log of
// them was found, so the rule is loose: the phase is the text before the
// first ':' or " (" or " real", the duration "real <n> ms", the memory the
// first "<n> MiB". See docs/logscan.md.
bool Perf(const LogLine& l, LogEvent& e) {
  if (l.logger != "PO:PERF") return false;
  std::string_view m = l.message;
  size_t name_end = std::min({m.find(':'), m.find(" ("), m.find(" real")});
  e.phase = Trim(m.substr(0, name_end));
  if (auto real = After(m, "real")) {
    if (auto ms = Milliseconds(Trim(*real))) e.seconds = *ms / 1000;
  }
  for (size_t mib = m.find("MiB"); mib != std::string_view::npos; mib = m.find("MiB", mib + 3)) {
    size_t start = mib;
    while (start > 0 && m[start - 1] == ' ') --start;
    while (start > 0 && (std::isdigit(static_cast<unsigned char>(m[start - 1])) ||
                         m[start - 1] == '.' || m[start - 1] == ','))
      --start;
    if (auto value = LeadingNumber(m.substr(start, mib - start))) {
      e.rss_total_mb = value;
      break;
    }
  }
  if (e.phase.empty() || (!e.seconds && !e.rss_total_mb)) return false;
  e.kind = LogEventKind::kPerf;
  e.framework = "poplar";
  return true;
}

// TensorFlow / JAX on IPU (the XLA backend in graphcore/tensorflow).
bool TensorFlow(const LogLine& l, LogEvent& e) {
  std::string_view m = l.message;
  if (auto rest = After(m, "Begin XLA compilation: ")) {
    e.kind = LogEventKind::kBeginCompile;
    ModuleAndHash(*rest, e);
  } else if (auto rest = After(m, "End XLA compilation: ")) {
    e.kind = LogEventKind::kEndCompile;
    ModuleAndHash(*rest, e);
  } else if (auto rest = After(m, "Compiling module ")) {
    // "Compiling module a_inference_train_function_18311__...__.19234:" (B02)
    std::string_view name = Trim(*rest);
    if (name.empty() || name.back() != ':') return false;
    e.kind = LogEventKind::kProgressStart;
    e.module = Trim(name.substr(0, name.size() - 1));
    e.framework = FrameworkOf(e.module);
  } else if (auto rest = After(m, "[Elapsed: ")) {
    // "[#####     ] 10% Step: Hlo Optimizations [Elapsed: 00:00:01.0]"
    size_t stage_end = m.rfind(" [Elapsed: ");
    size_t percent = m.rfind("% ", stage_end);
    e.kind = LogEventKind::kProgressFrame;
    e.framework = "tensorflow";
    e.seconds = Elapsed(*rest);
    if (percent != std::string_view::npos) {
      e.percent = PercentBefore(m, percent);
      e.phase = Trim(m.substr(percent + 2, stage_end - percent - 2));
    }
    if (!e.seconds && !e.percent) return false;
  } else if (auto rest = After(m, "Poplar compilation ")) {
    // The VLOG twin of the bar: "Poplar compilation 42% complete".
    size_t percent = rest->find('%');
    if (percent == std::string_view::npos) return false;
    e.kind = LogEventKind::kProgressFrame;
    e.framework = "tensorflow";
    e.percent = PercentBefore(*rest, percent);
    if (!e.percent) return false;
  } else if (m.find("Compiled cluster using XLA") != std::string_view::npos) {
    e.kind = LogEventKind::kXlaClusterCompiled;
    e.framework = "tensorflow";
  } else if (m.find("Begin Poplar graph construction") != std::string_view::npos) {
    e.kind = LogEventKind::kGraphConstructionBegin;
    e.framework = "tensorflow";
  } else if (auto rest = After(m, "Poplar version: ")) {
    size_t end = rest->find(' ');
    e.kind = LogEventKind::kPoplarVersion;
    e.module = rest->substr(0, end);
  } else if (size_t device = m.find("/device:IPU:"); device != std::string_view::npos) {
    // Three forms: "attached to IPU: 0", "attached to IPUs: 5,7,4,6" (SDK 0.9-2,
    // B09-B11), "attached to 1 IPU with Poplar device ID: 0" (SDK 2-3, B02).
    auto ipus = After(m, " attached to ");
    if (!ipus) return false;
    size_t name_end = m.find_first_of(" \t", device);
    e.kind = LogEventKind::kDeviceAttached;
    e.device = m.substr(device, name_end - device);
    e.ipus = Trim(*ipus);
  } else {
    return false;
  }
  return true;
}

// Executable caches: TensorFlow's VLOG lines (spec executable-cache.md 5) and
// PopART's session/devicex INFO lines (popart willow/src/session.cpp,
// devicex.cpp).
bool Cache(const LogLine& l, LogEvent& e) {
  std::string_view m = l.message;
  bool popart = l.logger.starts_with("popart");
  if (auto rest = After(m, "Couldn't find ")) {
    size_t tail = rest->rfind(" in executable cache");
    if (tail == std::string_view::npos) return false;
    e.kind = LogEventKind::kCacheMiss;
    e.path = Trim(rest->substr(0, tail));
  } else if (auto rest = After(m, "A pre-compiled Poplar program has been saved to ")) {
    e.kind = LogEventKind::kCacheSaved;
    e.path = Trim(*rest);
  } else if (auto rest = After(m, "Loading serialized PopART executable from ")) {
    e.kind = LogEventKind::kCacheHit;
    e.framework = "popart";
    e.path = Trim(*rest);
  } else if (auto rest = After(m, "Saving serialized Executablex to "); rest && popart) {
    e.kind = LogEventKind::kCacheSaved;
    e.framework = "popart";
    e.path = Trim(*rest);
  } else if (popart && m.find("Returning CachedExecutable") != std::string_view::npos) {
    e.kind = LogEventKind::kCacheHit;
    e.framework = "popart";
  } else if (auto rest = After(m, "Loaded ")) {
    size_t from = rest->rfind(" from ");
    if (from == std::string_view::npos) return false;
    std::string_view path = Trim(rest->substr(from + 6));
    if (!IsCacheFile(path)) return false;  // "Loaded 5 items from disk" is not ours
    e.kind = LogEventKind::kCacheHit;
    e.module = Trim(rest->substr(0, from));
    e.framework = FrameworkOf(e.module);
    e.path = path;
  } else {
    return false;
  }
  if (e.framework.empty()) e.framework = "tensorflow";
  return true;
}

// PopTorch's tqdm bar (poptorch python/_options_impl.py) and the lines its
// applications print; PopART's compile lines (irlowering.cpp).
bool Torch(const LogLine& l, LogEvent& e) {
  std::string_view m = l.message;
  if (auto rest = After(m, "Graph compilation:")) {
    // "Graph compilation:  84%|████████▍ | 84/100 [1:09:59<20:26]"
    size_t percent = rest->find('%');
    if (percent == std::string_view::npos) return false;
    e.percent = PercentBefore(*rest, percent);
    if (!e.percent) return false;
    size_t open = rest->find(" [", percent);
    if (open != std::string_view::npos) {
      std::string_view timing = rest->substr(open + 2);
      e.seconds = Elapsed(timing.substr(0, timing.find('<')));
    }
    e.kind = LogEventKind::kTorchProgress;
    e.framework = "poptorch";
  } else if (auto rest = After(m, "Compiled/Loaded model in ")) {
    e.seconds = LeadingNumber(Trim(*rest));
    if (!e.seconds) return false;
    e.kind = LogEventKind::kCompiledOrLoaded;
    e.framework = "poptorch";
  } else if (m.starts_with("Compiling Model") || m.starts_with("Compiling the model")) {
    // optimum-graphcore's trainer (L02), and the wording PopTorch scripts use.
    e.kind = LogEventKind::kFrameworkCompileStart;
    e.framework = "poptorch";
  } else if (l.logger.starts_with("popart") && m.starts_with("Starting compilation")) {
    e.kind = LogEventKind::kFrameworkCompileStart;
    e.framework = "popart";
  } else if (l.logger.starts_with("popart") && m.starts_with("Graph compiled")) {
    e.kind = LogEventKind::kFrameworkCompileEnd;
    e.framework = "popart";
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::optional<LogEvent> RecogniseLine(const LogLine& l) {
  LogEvent e{};
  e.line = l.number;
  e.timestamp = l.timestamp;
  e.indent = l.indent;
  if (l.message.empty()) return std::nullopt;
  if (Phase(l.message, e) || Perf(l, e) || Torch(l, e) || Cache(l, e) || TensorFlow(l, e)) return e;
  std::string_view source = l.source.substr(l.source.find_last_of('/') + 1);
  if (source == "poplar_compiler.cc") {
    e.kind = LogEventKind::kCompilerLine;
    e.framework = "tensorflow";
    return e;
  }
  return std::nullopt;
}

}  // namespace tileprof::analyzer
