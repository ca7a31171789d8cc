# The layers of DESIGN.md, held by the build: the scheduling core and the
# pure part of common/ (values, parsing, the topology model, conversions)
# must not reach gRPC, logging, databases, TLS, HTTP or services. A pure
# target that links one of those, directly or through another target, stops
# the configure step with the path that leads there.
#
# Includes are checked by tests/service/layers_test.sh: Debian installs the
# gRPC and spdlog headers in /usr/include, so an include path alone would not
# keep them out.

set(GPUSCHED_PURE_TARGETS
  gpusched_common gpusched_topology gpusched_net gpusched_config gpusched_convert
  gpusched_placement gpusched_sharing gpusched_core)

# Matched against every target name in a pure target's link closure. Threads
# and absl::synchronization are not here: Abseil's own base links them, so
# the include check is what keeps <thread> and <mutex> out.
set(GPUSCHED_IO_TARGET_PATTERNS
  "^gRPC::" "^spdlog::" "^SQLite::" "^OpenSSL::" "^prometheus-cpp::" "^PkgConfig::" "^CLI11::"
  "^gpusched_proto$" "^gpusched_logging$" "^gpusched_config_file$" "^gpusched_metrics_endpoint$"
  "^gpusched_service$" "^gpusched_tls$" "^gpusched_grpc_credentials$" "^gpusched_grpc_logging$" "^gpusched_h2$" "^gpusched_process$" "^gpusched_store$" "^gpusched_server$")

# The targets `target` links, directly and through its interface.
function(_gpusched_links target out)
  set(links "")
  get_target_property(aliased ${target} ALIASED_TARGET)
  if(aliased)
    set(target ${aliased})
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(direct ${target} LINK_LIBRARIES)
    if(direct)
      list(APPEND links ${direct})
    endif()
  endif()
  get_target_property(iface ${target} INTERFACE_LINK_LIBRARIES)
  if(iface)
    list(APPEND links ${iface})
  endif()
  set(names "")
  foreach(dep IN LISTS links)
    # $<LINK_ONLY:x>, as CMake writes a static library's private links.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    if(NOT dep MATCHES "^\\$<" AND TARGET ${dep})
      list(APPEND names ${dep})
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# Sets `out` to "A -> B -> ... -> forbidden" for the first I/O target that
# `root` reaches (breadth first, each target once), or to "" when none.
function(_gpusched_io_path root out)
  set(queue ${root})
  set(seen ${root})
  set(parent_of_${root} "")
  while(queue)
    list(POP_FRONT queue target)
    _gpusched_links(${target} deps)
    foreach(dep IN LISTS deps)
      if(dep IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${dep})
      set(parent_of_${dep} ${target})
      foreach(pattern IN LISTS GPUSCHED_IO_TARGET_PATTERNS)
        if(dep MATCHES "${pattern}")
          set(path ${dep})
          set(step ${target})
          while(NOT step STREQUAL "")
            list(PREPEND path ${step})
            set(step "${parent_of_${step}}")
          endwhile()
          string(JOIN " -> " text ${path})
          set(${out} "${text}" PARENT_SCOPE)
          return()
        endif()
      endforeach()
      list(APPEND queue ${dep})
    endforeach()
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

function(gpusched_check_layers)
  foreach(target IN LISTS GPUSCHED_PURE_TARGETS)
    if(NOT TARGET ${target})
      message(FATAL_ERROR "layers.cmake: pure target ${target} does not exist (renamed? update GPUSCHED_PURE_TARGETS)")
    endif()
    _gpusched_io_path(${target} path)
    if(NOT path STREQUAL "")
      message(FATAL_ERROR
        "layers.cmake: ${target} is a pure library but links an I/O one: ${path}. "
        "Move the I/O into common/io/ or daemon/server, or link gpusched_proto_messages instead of gpusched_proto.")
    endif()
  endforeach()
endfunction()
