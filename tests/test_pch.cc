// The translation unit that builds the tests' shared precompiled header
// (tileprof_test_pch in cmake/tileprof.cmake); it has no code of its own.
