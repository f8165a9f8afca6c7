// The view page's script and style sheet (analyzer/view/{base,memory,
// program}.js joined, and view.css), compiled in from their files so they
// stay ordinary JS and CSS to edit and lint (embed.cmake generates
// view_assets.cc).
#pragma once

#include <string_view>

namespace tileprof::analyzer {

extern const std::string_view kViewJs;
extern const std::string_view kViewCss;

}  // namespace tileprof::analyzer
