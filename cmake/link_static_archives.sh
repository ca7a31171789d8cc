#!/usr/bin/env bash
# The link of the programs started per command or per job, of the agent and
# of the daemon (their CXX_LINKER_LAUNCHER, with GPUSCHED_STATIC_CLI: cli/,
# agent/ and daemon/):
# the link command CMake made, with each shared library that has a static
# archive beside it (Debian ships them for gRPC, protobuf, Abseil, re2,
# c-ares, OpenSSL, zlib) taken from the archive, and libstdc++ and libgcc
# linked in too. A CLI started for every command otherwise spends most of
# its run in the dynamic loader: 58 shared objects and their relocations.
# Linked at a fixed address (-no-pie) for the same reason: a position-
# independent build leaves the loader 40,000 relocations to apply at each
# start (gpusched --version: 6.8 -> 4.7 ms of CPU here).
set -euo pipefail

# None of these programs loads a C++ shared library (spdlog and fmt are
# compiled in, metrics are written without prometheus-cpp's libraries), so
# the C++ runtime is linked in as well: one runtime in the process, ours.
static_runtime=(-static-libstdc++ -static-libgcc)

system_dirs=(/usr/lib/x86_64-linux-gnu /usr/lib /lib/x86_64-linux-gnu)
command=()
archives=()
search_dirs=()
for arg in "$@"; do
  case "$arg" in
    -L*) search_dirs+=("${arg#-L}") ;;
  esac
done
search_dirs+=("${system_dirs[@]}")

archive_for_name() {  # -lNAME -> the first libNAME.a on the search path
  local dir
  for dir in "${search_dirs[@]}"; do
    if [[ -f "$dir/lib$1.a" ]]; then
      echo "$dir/lib$1.a"
      return 0
    fi
  done
  return 1
}

for arg in "$@"; do
  case "$arg" in
    # Its archive needs libudev and others the link does not name.
    */libhwloc.so*) ;;
    /*.so | /*.so.[0-9]*)
      archive="${arg%%.so*}.a"
      if [[ -f "$archive" ]]; then
        archives+=("$archive")
        continue
      fi
      ;;
    -l*)
      name="${arg#-l}"
      # The C library's parts stay shared.
      case "$name" in
        c | m | dl | rt | pthread) ;;
        *)
          if archive="$(archive_for_name "$name")"; then
            archives+=("$archive")
            continue
          fi
          ;;
      esac
      ;;
  esac
  command+=("$arg")
done

# Archives refer to each other in no fixed order: one group resolves them,
# then the C library's parts they use.
exec "${command[@]}" -no-pie "${static_runtime[@]}" \
  -Wl,--start-group "${archives[@]}" -Wl,--end-group -ldl -lpthread -lm -lrt
