// ELF and ar constants used by the readers and writers in elfdump/ (values
// from the System V gABI and binutils include/elf/common.h).
#pragma once

#include <cstdint>

namespace tileprof::elf {

inline constexpr uint16_t kEmGraphcoreIpu = 248;  // EM_GRAPHCORE_IPU
inline constexpr uint8_t kOsAbiStandalone = 255;  // ELFOSABI_STANDALONE, as Graphcore's LLVM writes

}  // namespace tileprof::elf
