# Writes OUT, a C++ file defining tileprof::analyzer::kViewJs and kViewCss
# from the files JS and CSS, as raw string literals. Run at build time
# (cmake -P), so editing view.js rebuilds the page.
file(READ "${JS}" js)
file(READ "${CSS}" css)
foreach(text js css)
  string(FIND "${${text}}" ")tileprof_asset\"" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "${text} holds the raw string delimiter )tileprof_asset\"")
  endif()
endforeach()
file(WRITE "${OUT}.tmp"
  "// Generated from analyzer/view/view.js and view.css by embed.cmake.\n"
  "#include \"analyzer/view/view_assets.h\"\n"
  "namespace tileprof::analyzer {\n"
  "const std::string_view kViewJs = R\"tileprof_asset(${js})tileprof_asset\";\n"
  "const std::string_view kViewCss = R\"tileprof_asset(${css})tileprof_asset\";\n"
  "}  // namespace tileprof::analyzer\n")
file(RENAME "${OUT}.tmp" "${OUT}")
