// A 64-bit fingerprint of a module: XXH3 (common/hash.h) of its level-3
// canonical text (canonical.h), streamed so no string of the whole module is
// built. By construction it ignores what level 3 removes, and only that:
//
//   unchanged by: renaming any instruction, computation or the module;
//     ".N" suffixes and module numbers; metadata, origin and stack-frame
//     tables; print style, whitespace and comments; the order of
//     computations and of instructions in unscheduled computations;
//     attribute order and spacing
//   changed by: any shape or layout, opcode, attribute value (including
//     backend_config and sharding), printed constant value, operand or
//     control edge, call target, parameter number, ROOT, ENTRY, module
//     header attribute, the schedule of a scheduled module
//
// Elided constants ({...}) hash as elided: two dumps that elide different
// weights have the same fingerprint, as the text cannot tell them apart.
#pragma once

#include <cstdint>
#include <string>

#include "engine/hlo/module.h"

namespace tileprof::hlo {

uint64_t Fingerprint(const Module& module);

// "0x" and 16 lower-case hex digits.
std::string FingerprintToString(uint64_t fingerprint);

}  // namespace tileprof::hlo
