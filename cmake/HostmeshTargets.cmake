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
