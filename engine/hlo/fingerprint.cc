// Module fingerprint; see fingerprint.h.
#include "engine/hlo/fingerprint.h"

#include <fmt/format.h>

#include "common/hash.h"
#include "engine/hlo/canonical.h"
#include "engine/hlo/printer.h"

namespace tileprof::hlo {
namespace {

class HashSink : public TextSink {
 public:
  void Append(std::string_view text) override { hasher_.Add(text); }
  uint64_t Digest() const { return hasher_.Digest(); }

 private:
  Hasher hasher_;
};

}  // namespace

uint64_t Fingerprint(const Module& module) {
  HashSink sink;
  PrintModule(module, {.style = PrintStyle::kShort, .level = kLevelStructure}, &sink);
  return sink.Digest();
}

std::string FingerprintToString(uint64_t fingerprint) {
  return fmt::format("0x{:016x}", fingerprint);
}

}  // namespace tileprof::hlo
