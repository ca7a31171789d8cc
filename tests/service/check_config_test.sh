#!/usr/bin/env bash
# `gpuschedd check-config` and `gpusched-agent check-config` on the example
# configs shipped in packaging/config (exit 0, one line) and on broken files
# (exit 1, the message naming the file and line).
# Usage: check_config_test.sh GPUSCHEDD GPUSCHED_AGENT PACKAGING_CONFIG_DIR DATA_DIR
set -uo pipefail
gpuschedd=$1 agent=$2 shipped=$3 data=$4
failures=0

# expect EXIT_CODE REGEX COMMAND...: runs COMMAND, checks its exit code and
# that its output (stdout and stderr, one line) matches REGEX.
expect() {
  local want_code=$1 want_text=$2
  shift 2
  local out code
  out=$("$@" 2>&1)
  code=$?
  local lines
  lines=$(printf '%s\n' "$out" | wc -l)
  if [[ $code -ne $want_code || ! $out =~ $want_text || $lines -ne 1 ]]; then
    echo "FAIL: $*"
    echo "  exit $code (want $want_code), $lines line(s); output: $out"
    echo "  wanted: $want_text"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $out"
  fi
}

expect 0 "^$shipped/gpuschedd.toml: valid, 16 settings: listen=127.0.0.1:6870 .* share_packing=best-fit " \
  "$gpuschedd" check-config "$shipped/gpuschedd.toml"
expect 0 "^$shipped/agent.toml: valid, [0-9]+ settings: daemon=127.0.0.1:6870 " \
  "$agent" check-config "$shipped/agent.toml"

expect 1 "^gpuschedd: $data/broken-gpuschedd.toml:5: unknown key tick_milliseconds \(expected listen," \
  "$gpuschedd" check-config "$data/broken-gpuschedd.toml"
expect 1 "^gpuschedd: $data/badvalue-gpuschedd.toml:2: placement_policy \"fastest\" is not one of " \
  "$gpuschedd" check-config "$data/badvalue-gpuschedd.toml"
expect 1 "^gpusched-agent: $data/broken-agent.toml:4: fake_gpus must be an integer, got a string$" \
  "$agent" check-config "$data/broken-agent.toml"
# TLS files are read at check time; the first problem is the first key's.
expect 1 "^gpuschedd: $data/tls-gpuschedd.toml:5: tls_cert: cannot read $data/missing-gpuschedd.pem: No such file or directory$" \
  "$gpuschedd" check-config "$data/tls-gpuschedd.toml"
expect 1 "^gpuschedd: cannot read $data/missing.toml: No such file or directory$" \
  "$gpuschedd" check-config "$data/missing.toml"

# The running binaries refuse a broken file the same way, before doing anything.
expect 1 "^gpuschedd: $data/broken-gpuschedd.toml:5: unknown key tick_milliseconds" \
  "$gpuschedd" serve --config "$data/broken-gpuschedd.toml"
expect 1 "^gpusched-agent: $data/broken-agent.toml:4: fake_gpus must be an integer" \
  "$agent" --config "$data/broken-agent.toml"
# dev takes unauthenticated TCP callers as admins: it never listens where
# other machines reach it (refused before any state directory is made).
expect 1 "^gpuschedd: dev --listen 0.0.0.0:0 is not a loopback address: dev takes unauthenticated TCP callers as admins" \
  "$gpuschedd" dev --listen 0.0.0.0:0 --state-dir /nonexistent/gpusched-dev --no-demo
expect 1 "^gpuschedd: dev --listen \[::\]:0 is not a loopback address" \
  "$gpuschedd" dev --listen '[::]:0' --state-dir /nonexistent/gpusched-dev --no-demo
# The file fills what the command line leaves out, a flag wins over its key,
# and labels merge key by key: the agent's --discover shows the result.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/agent.toml" <<'EOT'
node_name = "from-file"
fake_gpus = 2
gpu_model = "File GPU"
[labels]
rack = "r01"
leaf = "leaf-01"
EOT
discovered=$("$agent" --config "$tmp/agent.toml" --node-name from-flag --label rack=r02 --discover \
  --discover-format json 2>/dev/null | tr -d ' \n')
for want in '"name":"from-flag"' '"index":1' '"model":"FileGPU"' '"rack":"r02"' '"leaf":"leaf-01"'; do
  if [[ $discovered != *"$want"* ]]; then
    echo "FAIL: --discover with agent.toml and flags lacks \"$want\":"
    echo "$discovered"
    failures=$((failures + 1))
  fi
done
if [[ $discovered == *"from-file"* || $discovered == *'"rack":"r01"'* || $discovered == *'"index":2'* ]]; then
  echo "FAIL: a file setting won over its flag:"
  echo "$discovered"
  failures=$((failures + 1))
fi

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
