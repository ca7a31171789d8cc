#!/usr/bin/env bash
# Clang's thread-safety analysis over the threaded code: every member that a
# mutex guards is ABSL_GUARDED_BY it, and a function that reads or writes one
# without holding the mutex (or calls a *Locked function that needs it) fails
# the check. CI builds with GCC, which has no such analysis, so this runs
# Debian's clang++ on each file with the flags the build used
# (compile_commands.json), checking only, no code generated.
#
# usage: thread_safety_test.sh BUILD_DIR SOURCE_DIR
# First it checks that a planted unguarded read is reported, so that a check
# which can no longer fail fails. Exit 77 (skipped) without clang++-14.
set -euo pipefail
build=$1 src=$(realpath "$2")
clang=$(command -v clang++-14 || true)
[[ -n $clang ]] || { echo "thread-safety: SKIPPED: no clang++-14 (apt-get install clang)"; exit 77; }
[[ -f $build/compile_commands.json ]] || { echo "thread-safety: no $build/compile_commands.json"; exit 1; }
checks=(-fsyntax-only -Wno-everything -Wthread-safety -Werror=thread-safety)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cat > "$scratch/planted.cc" <<'CC'
#include "common/threads/mutex.h"
class Planted {
 public:
  int Guarded() {
    gpusched::MutexLock lock(&mu_);
    return value_;
  }
  int Unguarded() { return value_; }
 private:
  gpusched::Mutex mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};
int main() { return Planted().Guarded() + Planted().Unguarded(); }
CC
if "$clang" -std=c++20 -I"$src" "${checks[@]}" "$scratch/planted.cc" 2> "$scratch/planted.err"; then
  echo "thread-safety: the planted unguarded read was not reported; the check cannot fail"
  exit 1
fi
# Exactly the unguarded read: the guarded one passes.
if [[ $(grep -c "requires holding mutex 'mu_'" "$scratch/planted.err") != 1 ]]; then
  cat "$scratch/planted.err"
  exit 1
fi

# The files of the threaded layers that take a mutex, with their compile commands, the compiler
# and its output dropped: "FILE<TAB>ARG ARG ...".
python3 - "$build/compile_commands.json" "$src" > "$scratch/commands" <<'PY'
import json, os, shlex, sys
db, src = sys.argv[1], os.path.realpath(sys.argv[2])
dirs = ("daemon/server/", "daemon/metrics/", "agent/", "common/io/", "cli/")
for entry in json.load(open(db)):
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    rel = os.path.relpath(path, src)
    if not rel.startswith(dirs):
        continue
    # Only what takes a mutex: the file or its header uses common/threads/mutex.h.
    text = open(path).read()
    header = path[:-3] + ".h"
    if os.path.exists(header):
        text += open(header).read()
    if "common/threads/mutex.h" not in text:
        continue
    args = entry.get("arguments") or shlex.split(entry["command"])
    kept, skip = [], False
    for arg in args[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-c", "-MF", "-MT"):
            skip = True
            continue
        if arg in ("-MD", "-Werror") or arg == path or arg == entry["file"]:
            continue
        kept.append(arg)
    print(rel + "\t" + entry["directory"] + "\t" + " ".join(shlex.quote(a) for a in kept))
PY
count=$(wc -l < "$scratch/commands")
((count > 0)) || { echo "thread-safety: no files of daemon/server, daemon/metrics, agent, common/io or cli in the compile database"; exit 1; }

check_one() {
  local rel=$1 dir=$2 args=$3
  eval "set -- $args"
  (cd "$dir" && "$clang" "$@" "${checks[@]}" "$src/$rel") > "$scratch/out.$$.$RANDOM" 2>&1 || {
    echo "thread-safety: $rel:"
    (cd "$dir" && "$clang" "$@" "${checks[@]}" "$src/$rel" 2>&1 | head -20)
    return 1
  }
}
export -f check_one
export clang src scratch
export checks_str="${checks[*]}"
failed=0
while IFS=$'\t' read -r rel dir args; do
  printf '%s\0%s\0%s\0' "$rel" "$dir" "$args"
done < "$scratch/commands" |
  xargs -0 -n 3 -P "$(nproc)" bash -c 'checks=($checks_str); check_one "$@"' _ || failed=1
((failed == 0)) || exit 1
echo "thread-safety: $count files of daemon/server, daemon/metrics, agent, common/io and cli pass clang's analysis"
