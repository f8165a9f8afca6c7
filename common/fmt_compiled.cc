// fmt's implementation, compiled once for the whole project: fmt's own
// src/format.cc (fmt 9.1.0, MIT licence, (c) Victor Zverovich), which Debian's
// libfmt-dev does not ship as source, only as libfmt.so.
//
// Why not header-only (FMT_HEADER_ONLY): every unit that included
// <fmt/format.h> then compiled format-inl.h (Dragonbox, the vformat engine)
// again; a trivial unit of ours took 7.0 s of CPU instead of 1.35 s (g++ 12,
// -O2, measured on a busy 2-core machine), in ~209 units. Why not Debian's
// libfmt.so: loading a shared library costs more than the whole run of
// `tileprof size` on a small archive (tests/cli/startup_test.cc checks that
// tileprof loads no libfmt). So this one unit is the static library
// tileprof_fmt, which every target links instead.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The explicit instantiations of fmt 9.1.0's src/format.cc; format.h
// declares the extern templates they satisfy when FMT_HEADER_ONLY is unset.
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

#ifndef FMT_STATIC_THOUSANDS_SEPARATOR
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
#endif

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
