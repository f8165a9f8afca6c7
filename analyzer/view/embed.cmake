# Writes OUT, a C++ file defining tileprof::analyzer::kViewJs and kViewCss:
# the view's scripts (base.js, memory.js, program.js in DIR, in that order)
# joined inside one strict-mode function, so they share its scope and put
# nothing in the page's globals, and DIR/view.css; as raw string literals.
# The function, runView(DATA), is called without the data; base.js reads
# it from the page, or fetches it and calls runView again with it.
# Run at build time (cmake -P), so editing a script rebuilds the page.
set(js "(function runView(DATA) {\n'use strict';\n")
foreach(part base memory program)
  file(READ "${DIR}/${part}.js" text)
  string(APPEND js "${text}")
endforeach()
string(APPEND js "})();\n")
file(READ "${DIR}/view.css" css)
foreach(text js css)
  string(FIND "${${text}}" ")tileprof_asset\"" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "${text} holds the raw string delimiter )tileprof_asset\"")
  endif()
endforeach()
file(WRITE "${OUT}.tmp"
  "// Generated from analyzer/view/*.js and view.css by embed.cmake.\n"
  "#include \"analyzer/view/view_assets.h\"\n"
  "namespace tileprof::analyzer {\n"
  "const std::string_view kViewJs = R\"tileprof_asset(${js})tileprof_asset\";\n"
  "const std::string_view kViewCss = R\"tileprof_asset(${css})tileprof_asset\";\n"
  "}  // namespace tileprof::analyzer\n")
file(RENAME "${OUT}.tmp" "${OUT}")
