#!/usr/bin/env bash
# Every C++ file of ours is as .clang-format writes it. On a failure it names
# each file and prints the change clang-format would make; the fix is
# `clang-format -i FILE` (or the whole tree, see the README).
#
# usage: format_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: format_test.sh SOURCE_DIR}
cd "$src"

# Debian 12's clang-format; another version may break lines differently, so
# the check runs only with the one the tree was formatted with.
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z $cf ]]; then
  echo "SKIPPED: clang-format is not installed (packaging/install-deps.sh installs it)"; exit 77
fi
version=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [[ $version != 14 ]]; then
  echo "SKIPPED: clang-format $version here; the tree is formatted with Debian 12's clang-format 14"; exit 77
fi

# The check must be able to fail: a badly formatted copy of a real file.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp .clang-format "$scratch/"
printf 'namespace x {\nint   f( int a ){return a;}\n}\n' > "$scratch/bad.cc"
if (cd "$scratch" && "$cf" --dry-run --Werror bad.cc 2>/dev/null); then
  echo "FAIL: clang-format accepted a badly formatted file; is .clang-format read?"; exit 1
fi

mapfile -t files < <(find agent cli common daemon tests \( -name '*.cc' -o -name '*.h' \) -not -path '*/data/*' | sort)
((${#files[@]} > 100)) || { echo "FAIL: only ${#files[@]} C++ files found under $src"; exit 1; }
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]} > 0)); then
  echo "FAIL: ${#bad[@]} of ${#files[@]} files are not formatted (clang-format -i FILE):"
  for f in "${bad[@]}"; do
    echo "== $f"
    "$cf" "$f" | diff -u "$f" - | head -20 || true
  done
  exit 1
fi
echo "format: all ${#files[@]} C++ files are formatted"
