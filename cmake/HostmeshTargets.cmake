# One way to declare a library, a program and a test, so every target gets the
# same standard, warnings and include root.

function(hostmesh_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                           -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion)
  if(HOSTMESH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# hostmesh_add_library(NAME SOURCES ... [DEPS ...])
function(hostmesh_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  hostmesh_warnings(${name})
endfunction()

# hostmesh_add_executable(NAME SOURCES ... [DEPS ...])
function(hostmesh_add_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  hostmesh_warnings(${name})
endfunction()

# One precompiled header for every test binary: GoogleTest, gMock and the
# standard headers tests use. Parsing them is most of a small test file's
# compile (2.0 s without, 0.7 s with, for a one-line test); a test target
# reuses it (REUSE_FROM), so it is built once, with the flags all tests share.
# GCC 12 reports its false -Warray-bounds and -Wstringop-overflow on
# std::string's inlined copies (char_traits.h) once the standard headers come
# precompiled: it no longer treats them as system headers for those checks.
# Six test files tripped them; off for tests only.
set(HOSTMESH_TEST_PCH_OPTIONS "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(HOSTMESH_TEST_PCH_OPTIONS -Wno-array-bounds -Wno-stringop-overflow)
endif()
function(hostmesh_test_pch)
  if(TARGET hm_test_pch)
    return()
  endif()
  add_library(hm_test_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/test_pch.cc)
  target_include_directories(hm_test_pch PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(hm_test_pch PRIVATE GTest::gtest GTest::gmock)
  hostmesh_warnings(hm_test_pch)
  # Some tests' dependencies compile them with -pthread (it defines
  # _REENTRANT), which a header must be precompiled with to be reused: all
  # tests get it (they link pthreads through GoogleTest anyway).
  target_compile_options(hm_test_pch PRIVATE -pthread ${HOSTMESH_TEST_PCH_OPTIONS})
  target_precompile_headers(
    hm_test_pch PRIVATE
    <gmock/gmock.h>
    <gtest/gtest.h>
    <algorithm>
    <chrono>
    <cstdint>
    <functional>
    <map>
    <memory>
    <optional>
    <set>
    <string>
    <unordered_map>
    <vector>)
endfunction()

# hostmesh_add_test(NAME SOURCES ... [DEPS ...] [LABELS ...] [RESOURCE_LOCK name])
# A GoogleTest binary registered with ctest; label "unit" unless told otherwise.
# Tests that build a fabric take RESOURCE_LOCK fabric, so they run one at a time.
function(hostmesh_add_test name)
  cmake_parse_arguments(ARG "" "RESOURCE_LOCK" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  hostmesh_add_executable(${name} SOURCES ${ARG_SOURCES} DEPS ${ARG_DEPS} GTest::gtest_main
                          GTest::gmock)
  hostmesh_test_pch()
  target_compile_options(${name} PRIVATE -pthread ${HOSTMESH_TEST_PCH_OPTIONS})
  target_precompile_headers(${name} REUSE_FROM hm_test_pch)
  set(props LABELS "${ARG_LABELS}")
  if(ARG_RESOURCE_LOCK)
    list(APPEND props RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  include(GoogleTest)
  gtest_discover_tests(${name} TEST_PREFIX "${name}." PROPERTIES ${props} DISCOVERY_TIMEOUT 60)
endfunction()

# hostmesh_add_python_test(NAME SCRIPT [LABELS ...] [RESOURCE_LOCK ...] [TIMEOUT s])
# A Python unittest script; exit code 77 means "skipped" (for example: not root).
function(hostmesh_add_python_test name)
  cmake_parse_arguments(ARG "" "SCRIPT;TIMEOUT" "LABELS;RESOURCE_LOCK" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  add_test(NAME ${name} COMMAND ${HOSTMESH_PYTHON3} ${ARG_SCRIPT})
  set_tests_properties(${name} PROPERTIES
    LABELS "${ARG_LABELS}"
    SKIP_RETURN_CODE 77
    TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "HOSTMESH_SOURCE_DIR=${PROJECT_SOURCE_DIR};HOSTMESH_BUILD_DIR=${PROJECT_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1")
  if(ARG_RESOURCE_LOCK)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK "${ARG_RESOURCE_LOCK}")
  endif()
endfunction()
