# HOSTMESH_FUZZ: libFuzzer targets for every decoder of outside input (fuzz/).
# Only with clang, in a build directory of its own (scripts/fuzz-smoke.sh):
# every library compiled there is instrumented for the fuzzer's coverage and
# for ASan and UBSan, and `ninja fuzz_all` builds the targets and only the
# libraries they link, not the rest of the project.
option(HOSTMESH_FUZZ "Build the libFuzzer targets in fuzz/ (clang only)" OFF)

if(HOSTMESH_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(WARNING "HOSTMESH_FUZZ needs clang (libFuzzer); ${CMAKE_CXX_COMPILER_ID} has none: "
                  "the fuzz targets are not built. Configure a separate build dir with "
                  "CC=clang CXX=clang++.")
  set(HOSTMESH_FUZZ OFF CACHE BOOL "Build the libFuzzer targets in fuzz/ (clang only)" FORCE)
endif()

if(HOSTMESH_FUZZ)
  # The build (every library, instrumented) is most of a smoke run's time:
  # scripts/fuzz-smoke.sh builds at -O0 (about 40% less compile time),
  # bench/fuzz.sh at -O1 (faster executions). Line tables only, for the stack
  # traces. Without NDEBUG: an assert that hostile input can reach is a finding.
  set(HOSTMESH_FUZZ_OPT "-O1" CACHE STRING "Optimization level of the fuzz build")
  set(CMAKE_C_FLAGS_RELWITHDEBINFO "${HOSTMESH_FUZZ_OPT} -gline-tables-only")
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "${HOSTMESH_FUZZ_OPT} -gline-tables-only")
  # UB is a crash like any other (by default UBSan reports and goes on).
  set(HOSTMESH_SANITIZERS address,undefined)
  add_compile_options(-fsanitize=fuzzer-no-link,${HOSTMESH_SANITIZERS}
                      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${HOSTMESH_SANITIZERS})
endif()
