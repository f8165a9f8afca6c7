// Number formatting shared by every report: the conventions of
// ../shared/spec/text-report.md section 2.
#pragma once

#include <cstdint>
#include <string>

namespace tileprof {

// 1234567 -> "1,234,567".
std::string WithThousands(uint64_t value);
std::string WithThousands(int64_t value);

// A fixed-point value with thousands separators: (1600.0, 1) -> "1,600.0".
std::string WithThousands(double value, int decimals);

// Binary multiples with the report's decimal-looking labels and one decimal:
// 262144 -> "256.0 kB", 318767104 -> "304.0 MB", 100 -> "100 B".
std::string BinarySize(uint64_t bytes);

// Kibibytes with one decimal and a " K" suffix: 49184 -> "48.0 K".
std::string KibiK(uint64_t bytes);

}  // namespace tileprof
