// Whether this test binary is built with AddressSanitizer, for tests that
// leave their slowest inputs to the release build (GCC defines
// __SANITIZE_ADDRESS__; Clang answers __has_feature).
#pragma once

namespace tileprof {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace tileprof
