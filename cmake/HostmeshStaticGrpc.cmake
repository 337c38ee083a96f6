# gRPC, protobuf and Abseil: linked statically into hostmesh-agent, shared
# into every other program.
#
# Why: the relocations of a shared object's data (GOT, vtables, pointer
# tables) are written at load time, so those pages are private copies in
# every process, page-rounded per object. The agent mapped 48 such objects
# for gRPC, protobuf and Abseil; linked in, only what it calls comes along,
# in a few pages: 0.6 MB less private memory on every GPU host (3.30 to 2.71
# MB at 10 probes/s per NIC, docs/development.md, "Agent overhead"). OpenSSL,
# zlib, glibc and libstdc++ stay shared (Debian's security updates). The
# analyzer, the tests and the tools link the shared objects: their links
# stay fast.
option(HOSTMESH_AGENT_STATIC_GRPC "Link gRPC, protobuf and Abseil statically into hostmesh-agent" ON)
define_property(TARGET PROPERTY HOSTMESH_STATIC_GRPC
  BRIEF_DOCS "Link the static twins of hostmesh_grpc_dependency's targets"
  FULL_DOCS "Set on an executable; read as its link dependencies are walked.")

# _hostmesh_static_twin(TARGET OUT): OUT names hm_static::<TARGET, :: as _>,
# TARGET with the archive beside its shared object (Debian's -dev packages
# ship both), depending on the twins of its gRPC, protobuf, Abseil, re2 and
# c-ares dependencies (so CMake orders the archives) and on the others
# (OpenSSL, zlib, threads, libc's) as they are.
function(_hostmesh_static_twin target out)
  string(REPLACE "::" "_" twin "${target}")
  set(twin "hm_static::${twin}")
  set(${out} ${twin} PARENT_SCOPE)
  if(TARGET ${twin})
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    add_library(${twin} INTERFACE IMPORTED)
  else()
    foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE)
      get_target_property(shared ${target} ${prop})
      if(shared)
        break()
      endif()
    endforeach()
    string(REGEX REPLACE "\\.so[.0-9]*$" ".a" archive "${shared}")
    if(NOT EXISTS "${archive}")
      message(FATAL_ERROR "HOSTMESH_AGENT_STATIC_GRPC: ${target} has no ${archive}")
    endif()
    add_library(${twin} STATIC IMPORTED)
    set_target_properties(${twin} PROPERTIES IMPORTED_LOCATION "${archive}")
  endif()
  get_property(includes TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES)
  set_target_properties(${twin} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${includes}")
  get_property(deps TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES)
  set(twin_deps)
  foreach(dep IN LISTS deps)
    if(dep MATCHES "^(absl|gRPC|protobuf|re2|c-ares)::" AND TARGET ${dep})
      _hostmesh_static_twin(${dep} dep)
    elseif(dep STREQUAL "-lre2")  # gRPC's Findre2 makes re2::re2 from pkg-config
      find_library(HOSTMESH_RE2_ARCHIVE libre2.a REQUIRED)
      set(dep ${HOSTMESH_RE2_ARCHIVE})
    endif()
    list(APPEND twin_deps "${dep}")
  endforeach()
  set_target_properties(${twin} PROPERTIES INTERFACE_LINK_LIBRARIES "${twin_deps}")
endfunction()

# hostmesh_grpc_dependency(NAME TARGET): an interface library NAME for the
# libraries to link instead of TARGET. It links TARGET, or its static twin
# into an executable whose HOSTMESH_STATIC_GRPC property is true: the
# generator expression is read for the executable at the end of the chain,
# so the static libraries in between need not know which it is.
function(hostmesh_grpc_dependency name target)
  add_library(${name} INTERFACE)
  if(HOSTMESH_AGENT_STATIC_GRPC)
    _hostmesh_static_twin(${target} twin)
    target_link_libraries(${name} INTERFACE
                          "$<IF:$<BOOL:$<TARGET_PROPERTY:HOSTMESH_STATIC_GRPC>>,${twin},${target}>")
  else()
    target_link_libraries(${name} INTERFACE ${target})
  endif()
endfunction()
