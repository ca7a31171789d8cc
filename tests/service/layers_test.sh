#!/usr/bin/env bash
# The layers of DESIGN.md, checked on the sources: the scheduling core and
# the pure part of common/ include nothing that does I/O or runs threads, and
# the core never reads the wall clock. (cmake/layers.cmake checks the links;
# this checks the includes, which Debian's /usr/include would let through.)
#
# usage: layers_test.sh SOURCE_DIR
# First it plants each kind of violation in a scratch tree and checks that
# every one is reported, so that a check which can no longer fail fails.
set -euo pipefail

# Folders whose files must stay pure, relative to the source root. Only the
# files directly in common/ count there: common/io/ is where its I/O lives.
pure_dirs=(daemon/core common/topology common/net common/config common/convert)
pure_flat_dirs=(common)

# Extended regexes matched against each #include line, with why each is out.
forbidden_includes=(
  '[<"](grpcpp|grpc\+\+|grpc)/|\.grpc\.pb\.h"|gRPC: the wire belongs to daemon/server, agent/ and cli/'
  '[<"]spdlog/|logging: the core returns what happened (Effects, PassPlan); the caller logs it'
  '[<"](sqlite3\.h|libpq-fe\.h)|a database: the store is daemon/store'
  '[<"](prometheus|openssl|systemd|CLI)/|an I/O library: it lives in common/io/ or a binary'
  '<(thread|mutex|shared_mutex|condition_variable|future|stop_token|semaphore|latch|barrier)>|threads: the core has one owner, the scheduler thread'
  '[<"]absl/synchronization/|threads: the core has one owner, the scheduler thread'
  '<(fstream|iostream|cstdio|stdio\.h|filesystem)>|files or streams: callers read and write, the pure code gets text'
  '<(unistd\.h|fcntl\.h|dirent\.h|netdb\.h|poll\.h|signal\.h|csignal)>|system calls: I/O belongs outside the pure layers'
  '<(sys|netinet|arpa)/|system calls: I/O belongs outside the pure layers'
  '"(common/io|daemon/server|daemon/store|daemon/sim|daemon/dev|daemon/config|daemon/metrics|agent|cli)/|a layer above: dependencies point downwards only'
)
# A line may keep an include the list refuses when it says why on the line,
# e.g. `#include <filesystem>  // layers: lexical paths only, no file is read`.
allow_marker='// layers:'

# Calls that read the wall clock or unseeded randomness; the core gets both
# injected (Clock, seeds) so that a trace replays bit-identically.
core_forbidden_calls='absl::Now\(|std::chrono::(system|steady|high_resolution)_clock|std::random_device|[^_[:alnum:]]time\(nullptr\)|getenv\('

# Prints one line per violation under ROOT; returns 1 if any.
check_tree() {
  local root=$1 found=0 files=() dir rule pattern why line f
  for dir in "${pure_dirs[@]}"; do
    [[ -d $root/$dir ]] && while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$root/$dir" \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z)
  done
  for dir in "${pure_flat_dirs[@]}"; do
    [[ -d $root/$dir ]] && while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$root/$dir" -maxdepth 1 \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z)
  done
  ((${#files[@]} > 0)) || { echo "layers: no source files under $root (${pure_dirs[*]})"; return 1; }
  for rule in "${forbidden_includes[@]}"; do
    pattern=${rule%|*}
    why=${rule##*|}
    while IFS= read -r line; do
      [[ $line == *"$allow_marker"* ]] && continue
      echo "${line#"$root/"}  <- $why"
      found=1
    done < <(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*.*(${pattern})" "${files[@]}" || true)
  done
  local core_files=()
  for f in "${files[@]}"; do [[ $f == "$root/daemon/core/"* ]] && core_files+=("$f"); done
  ((${#core_files[@]} > 0)) || { echo "layers: no source files under $root/daemon/core"; return 1; }
  while IFS= read -r line; do
    [[ $line == *"$allow_marker"* ]] && continue
    echo "${line#"$root/"}  <- the core's time and randomness are injected (Clock, seeds)"
    found=1
  done < <(grep -HnE "$core_forbidden_calls" "${core_files[@]}" || true)
  return $found
}

src=${1:?usage: layers_test.sh SOURCE_DIR}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The check must catch each kind of violation.
mkdir -p "$scratch/daemon/core/policy" "$scratch/common/topology" "$scratch/common/io/tls"
cat > "$scratch/daemon/core/policy/bad.cc" <<'CC'
#include <grpcpp/grpcpp.h>
#include "spdlog/spdlog.h"
#include <mutex>
#include <fstream>
#include "daemon/server/daemon.h"
#include <filesystem>  // layers: lexical paths only
int Stamp() { return absl::Now() > absl::Time() ? 1 : 0; }
CC
cat > "$scratch/common/topology/bad.h" <<'CC'
#  include <sys/socket.h>
#include "gpusched/v1/agent.grpc.pb.h"
CC
cat > "$scratch/common/bad.h" <<'CC'
#include <thread>
CC
echo '#include <grpcpp/grpcpp.h>' > "$scratch/common/io/tls/fine.cc"
if planted=$(check_tree "$scratch"); then
  echo "FAIL: the check found nothing in a tree with planted violations"; exit 1
fi
expected=(
  "daemon/core/policy/bad.cc:1:" "daemon/core/policy/bad.cc:2:" "daemon/core/policy/bad.cc:3:"
  "daemon/core/policy/bad.cc:4:" "daemon/core/policy/bad.cc:5:" "daemon/core/policy/bad.cc:7:"
  "common/topology/bad.h:1:" "common/topology/bad.h:2:" "common/bad.h:1:")
for e in "${expected[@]}"; do
  grep -qF "$e" <<<"$planted" || { echo "FAIL: planted violation $e not reported; the check said:"; echo "$planted"; exit 1; }
done
for unexpected in "bad.cc:6:" "common/io/"; do
  if grep -qF "$unexpected" <<<"$planted"; then
    echo "FAIL: reported $unexpected, which is allowed:"; echo "$planted"; exit 1
  fi
done
echo "layers: the check reports all ${#expected[@]} planted violations and nothing allowed"

if ! report=$(check_tree "$src"); then
  echo "FAIL: the pure layers include or call what they must not:"
  echo "$report"
  exit 1
fi
echo "layers: daemon/core, common/{topology,net,config,convert} and common/*.{h,cc} are pure"
