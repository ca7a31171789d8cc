# Hot code first. A program's resident memory is mostly the pages of its own
# code that it has touched, and the kernel maps them in blocks around each
# fault: the functions a daemon and an agent run (2.1 MiB and 0.6 MiB of
# code) were spread over 13 MiB and 8 MiB of text, and most of the text
# became resident. Linked with lld and an order file (the functions one run
# executed, cmake/make_text_order.sh), they come first and together.
#
# lld moves whole input sections, and Debian's archives have one per object
# file: the daemon, whose executed code is mostly gRPC's, protobuf's and
# SQLite's, is rewritten after its link by llvm-bolt, which moves single
# functions (cmake/bolt_text_order.sh: a fresh daemon with 16 agents and one
# job 12.7 -> 9.0 MiB resident).
#
# An order file that has gone stale only orders less: functions it no longer
# names are placed as the linker would place them anyway. Needs the lld,
# bolt-16 and python3 packages (packaging/install-deps.sh); without lld or
# bolt-16 the link is the usual one, or lld's order alone, and configure says so.
find_program(GPUSCHED_LLD_BIN ld.lld)
find_program(GPUSCHED_BOLT_BIN NAMES llvm-bolt-16 llvm-bolt)
find_program(GPUSCHED_PYTHON3_BIN python3)

# Each of our functions in a section of its own, so that the linker can move
# it alone. Debian's archives (gRPC, protobuf, Abseil) have a section per
# object file, which moves whole. (Idle agent: 5.6 -> 4.9 MiB.)
if(GPUSCHED_STATIC_CLI AND GPUSCHED_LLD_BIN)
  add_compile_options(-ffunction-sections)
endif()

# gpusched_order_text(TARGET ORDER_FILE [BOLT]): TARGET's link puts the
# functions ORDER_FILE names first, in its order; with BOLT, llvm-bolt then
# moves them function by function. Only with GPUSCHED_STATIC_CLI: the order
# file is made from, and measured on, that link.
function(gpusched_order_text target order_file)
  if(NOT GPUSCHED_STATIC_CLI)
    return()
  endif()
  if(NOT GPUSCHED_LLD_BIN)
    message(WARNING "ld.lld not found (Debian: lld): ${target} is linked without its text order, "
                    "and holds more memory resident")
    return()
  endif()
  target_link_options(${target} PRIVATE -fuse-ld=lld "LINKER:--symbol-ordering-file=${order_file}"
                      "LINKER:--no-warn-symbol-ordering")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${order_file})
  if(NOT "BOLT" IN_LIST ARGN)
    return()
  endif()
  if(NOT GPUSCHED_BOLT_BIN OR NOT GPUSCHED_PYTHON3_BIN)
    message(WARNING "llvm-bolt or python3 not found (Debian: bolt-16, python3): ${target} keeps lld's "
                    "order, whose blocks are whole object files, and holds more memory resident")
    return()
  endif()
  set_property(
    TARGET ${target}
    APPEND
    PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/bolt_text_order.sh ${PROJECT_SOURCE_DIR}/cmake/bolt_unsafe_functions.py)
  target_link_options(${target} PRIVATE "LINKER:--emit-relocs")
  # What packaging/CMakeLists.txt installs (cmake/bolt_text_order.sh says why).
  set_target_properties(${target} PROPERTIES GPUSCHED_RELEASE_FILE $<TARGET_FILE:${target}>.release)
  add_custom_command(
    TARGET ${target}
    POST_BUILD
    COMMAND ${PROJECT_SOURCE_DIR}/cmake/bolt_text_order.sh ${GPUSCHED_BOLT_BIN} ${order_file} $<TARGET_FILE:${target}>
    COMMENT "Moving ${target}'s executed functions first (llvm-bolt)"
    VERBATIM)
endfunction()
