// Error messages that locate the problem in HLO text, as compilers print
// them (STYLE.md item 3):
//
//   model.hlo:12:28: error: unknown opcode 'ad'
//     ROOT %add.3 = f32[2]{0} ad(%a, %b)
//                             ^
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tileprof::hlo {

// "<name>:<line>:<col>: error: <message>", then the source line and a caret
// under the byte at `offset` (tabs in the line are kept so the caret lines
// up). Very long lines are cut around the offset.
std::string FormatDiagnostic(std::string_view source_name, std::string_view text, uint32_t offset,
                             std::string_view message);

}  // namespace tileprof::hlo
