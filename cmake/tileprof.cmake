# Helpers that keep every layer's CMakeLists.txt to a few lines.

# tileprof_library(NAME SOURCES... DEPS... [PCH headers...]): one library per
# layer, static unless TILEPROF_SHARED_LIBS (see the top-level CMakeLists).
# PCH names the headers most of the layer's files include, parsed once into a
# precompiled header for the layer (TILEPROF_PCH; see TILEPROF_PCH_COMMON).
function(tileprof_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PCH" ${ARGN})
  if(TILEPROF_SHARED_LIBS)
    add_library(${name} SHARED ${ARG_SOURCES})
  else()
    add_library(${name} STATIC ${ARG_SOURCES})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  if(TILEPROF_PCH AND ARG_PCH)
    target_precompile_headers(${name} PRIVATE ${ARG_PCH})
  endif()
endfunction()

# The standard and fmt headers that nearly every file of every layer includes.
# Each layer's files spent 1-1.5 s of their 3-6 s parsing them and
# instantiating their templates again (lower_dot.cc at -O2: 6.2 s, 4.6 s with
# these precompiled, 2.8 s with the engine headers it includes as well). In a
# fresh clone's CI build the engine's objects took 284 CPU s instead of 421
# (GCC), 409 instead of 564 (Clang, ASan); the analyzer's took as long with
# one as without, and it has none.
set(TILEPROF_PCH_COMMON
  <algorithm> <array> <cstdint> <cstring> <functional> <map> <memory> <optional>
  <span> <string> <string_view> <unordered_map> <utility> <variant> <vector>
  <fmt/format.h>)

# tileprof_test(NAME SOURCES... LIBS...): one GoogleTest binary, registered
# with CTest test by test. Tests find the shared corpus through
# TILEPROF_SHARED_DIR and the built CLI through TILEPROF_CLI.
set(TILEPROF_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH "The shared/ folder with spec and corpus")
function(tileprof_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  tileprof_test_options(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_precompile_headers(${name} REUSE_FROM tileprof_test_pch)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()

# The flags every test file compiles with; the shared precompiled header below
# is only valid for files compiled with the same ones.
function(tileprof_test_options name)
  # One code model for the shared header's library and the test executables
  # (with TILEPROF_PYTHON_PACKAGE, CMake would give the one -fPIC and the others
  # -fPIE, and GCC refuses a header precompiled with the other).
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  # A test's own code is assertions over what the layers it links compute,
  # and those stay optimised; unoptimised, a test file compiles in half the
  # time (report_views_test.cc: 29 s at -O2, 15 s at -O0), and the test
  # files were 42% of a clean build's compile time. The last -O wins.
  target_compile_options(${name} PRIVATE -O0)
  target_compile_definitions(${name} PRIVATE
    TILEPROF_SHARED_DIR="${TILEPROF_SHARED_DIR}"
    TILEPROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TILEPROF_CLI="$<TARGET_FILE:tileprof>")
endfunction()

# Every test file includes gtest (most gmock) and much the same standard
# headers: parsed once into one precompiled header that all ~90 test binaries
# reuse, a small test file compiles in 2.2 s instead of 4.6 s (tile_map_test.cc,
# g++ 12); the files that stay slow are slow in their own code.
function(tileprof_test_pch)
  add_library(tileprof_test_pch STATIC ${PROJECT_SOURCE_DIR}/tests/test_pch.cc)
  tileprof_test_options(tileprof_test_pch)
  target_link_libraries(tileprof_test_pch PRIVATE GTest::gtest GTest::gmock tileprof_fmt)
  # With TILEPROF_PCH, the layers' headers that test files include most as
  # well. No gain has been measured outside this machine's noise: in two
  # fresh-clone CI builds the test objects took 393 and 455 CPU s with them,
  # 420 s without (GCC). A test file's time is mostly gtest's code at -O0.
  set(layer_headers)
  if(TILEPROF_PCH)
    set(layer_headers [["common/expected.h"]] [["common/file.h"]] [["reports/report.h"]]
      [["engine/hlo/module.h"]] [["engine/graph/graph.h"]] [["engine/codelets/codelets.h"]])
  endif()
  target_precompile_headers(tileprof_test_pch PRIVATE
    <gmock/gmock.h> <gtest/gtest.h> <fmt/format.h> <nlohmann/json.hpp>
    <algorithm> <filesystem> <fstream> <map> <sstream> <string> <vector> ${layer_headers})
endfunction()

# tileprof_fuzzer(NAME SOURCE LIBS... CORPUS dir): a libFuzzer target when
# TILEPROF_FUZZ is on (clang); always a replay binary that feeds every file of
# the corpus directory to LLVMFuzzerTestOneInput, registered as a test, so the
# corpus runs under ordinary ctest (and under the sanitizers in that build).
function(tileprof_fuzzer name)
  cmake_parse_arguments(ARG "" "SOURCE" "LIBS;CORPUS" ${ARGN})
  add_executable(${name}_replay ${ARG_SOURCE} ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
  target_link_libraries(${name}_replay PRIVATE ${ARG_LIBS})
  add_test(NAME ${name}_corpus_replay COMMAND ${name}_replay ${ARG_CORPUS})
  set_tests_properties(${name}_corpus_replay PROPERTIES TIMEOUT 600)
  if(TILEPROF_FUZZ)
    add_executable(${name} ${ARG_SOURCE})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} -fsanitize=fuzzer)
  endif()
endfunction()

# tileprof_add_subdirectories(): adds every immediate subdirectory that has a
# CMakeLists.txt, so tests/, fuzz/ and bench/ grow by adding a folder.
function(tileprof_add_subdirectories)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(child ${children})
    if(IS_DIRECTORY ${child} AND EXISTS ${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()

# tileprof_tests_per_file(LIBS ...): one GoogleTest binary per *_test.cc in the
# calling folder, named after the file, so that a folder's tests build and fail
# independently.
function(tileprof_tests_per_file)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  foreach(test ${tests})
    get_filename_component(name ${test} NAME_WE)
    tileprof_test(${name} SOURCES ${test} LIBS ${ARG_LIBS})
    add_dependencies(${name} tileprof)
  endforeach()
endfunction()

# Python for scripts and test oracles: Debian's, which has python3-numpy
# (scripts/setup installs it); a pyenv or venv python on PATH may not.
set(TILEPROF_PYTHON /usr/bin/python3 CACHE FILEPATH "python3 with NumPy, for scripts and test oracles")
