#!/usr/bin/env bash
# packaging/tls/gpusched-certs in a scratch directory: a CA, a daemon
# certificate for localhost 127.0.0.1 ::1, two nodes' and a user's, each
# checked with openssl (chains to the CA, CN, extended key usage,
# subjectAltName, P-256 key matching the certificate, file modes); then the
# refusals: a second CA, a bad name, a missing CA, re-issuing without --force.
# Usage: make_certs_test.sh GPUSCHED_CERTS
set -uo pipefail
certs=$1
passed=0
failed=0

ok() {
  echo "ok: $*"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pki=$tmp/pki
# The host's openssl configuration must not matter: point it at garbage.
printf 'this is [not an openssl configuration\n' >"$tmp/garbage.cnf"
export OPENSSL_CONF=$tmp/garbage.cnf

# run EXPECTED_CODE ARGS...: runs gpusched-certs, its output in $out.
out=
run() {
  local want=$1 code
  shift
  out=$("$certs" "$@" 2>&1)
  code=$?
  if [[ $code -eq $want ]]; then
    ok "gpusched-certs $* exits $want"
  else
    fail "gpusched-certs $* exits $code, not $want; output:"
    printf '  %s\n' "$out"
  fi
}
output_has() {  # output_has REGEX
  if [[ $out =~ $1 ]]; then ok "output matches '$1'"; else fail "output does not match '$1': $out"; fi
}
mode_is() {  # mode_is MODE FILE
  local mode
  mode=$(stat -c %a "$2" 2>/dev/null)
  if [[ $mode == "$1" ]]; then ok "$2 has mode $1"; else fail "$2 has mode '$mode', not $1"; fi
}
subject_is() {  # subject_is CERT CN
  local subject
  subject=$(openssl x509 -in "$1" -noout -subject -nameopt RFC2253 2>&1)
  if [[ $subject == "subject=CN=$2" ]]; then ok "$1: subject CN=$2"; else fail "$1: subject is '$subject', not CN=$2"; fi
}
eku_is() {  # eku_is CERT "TLS Web Server Authentication"
  local eku
  eku=$(openssl x509 -in "$1" -noout -ext extendedKeyUsage 2>&1 | sed -n '2p' | sed 's/^ *//')
  if [[ $eku == "$2" ]]; then ok "$1: extended key usage is $2"; else fail "$1: extended key usage is '$eku', not $2"; fi
}
verifies() {  # verifies PURPOSE CERT [openssl verify options]
  local purpose=$1 cert=$2 result
  shift 2
  if result=$(openssl verify -CAfile "$pki/ca.crt" -purpose "$purpose" "$@" "$cert" 2>&1); then
    ok "$cert verifies against ca.crt for $purpose $*"
  else
    fail "$cert does not verify for $purpose $*: $result"
  fi
}
does_not_verify() {  # does_not_verify PURPOSE CERT [options]
  local purpose=$1 cert=$2 result
  shift 2
  if result=$(openssl verify -CAfile "$pki/ca.crt" -purpose "$purpose" "$@" "$cert" 2>&1); then
    fail "$cert verifies for $purpose $*, it should not"
  else
    ok "$cert is refused for $purpose $*"
  fi
}
key_pair() {  # key_pair CERT KEY: a P-256 key, the certificate's own
  local curve cert_pub key_pub
  curve=$(openssl pkey -in "$2" -noout -text 2>&1 | grep -E 'NIST CURVE|ASN1 OID')
  cert_pub=$(openssl x509 -in "$1" -noout -pubkey 2>&1)
  key_pub=$(openssl pkey -in "$2" -pubout 2>&1)
  if [[ $curve == *P-256* || $curve == *prime256v1* ]]; then ok "$2 is a P-256 key"; else fail "$2 is not a P-256 key: $curve"; fi
  if [[ -n $cert_pub && $cert_pub == "$key_pub" ]]; then ok "$2 is the key of $1"; else fail "$2 is not the key of $1"; fi
}
sha() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
no_temp_files() {
  local left
  left=$(find "$pki" -name '.gpusched-certs.*' 2>/dev/null)
  if [[ -z $left ]]; then ok "no temporary files left in $pki"; else fail "temporary files left: $left"; fi
}

# --- usage ---------------------------------------------------------------------
run 0 --help
output_has '^Usage: [^ ]+ ca +DIR'
run 2
run 2 frobnicate "$pki"

# --- the CA ----------------------------------------------------------------------
run 0 ca "$pki"
output_has "wrote $pki/ca.crt"
output_has "wrote $pki/ca.key"
check "ca: one line per file written" [ "$(printf '%s\n' "$out" | grep -c '^wrote ')" -eq 2 ]
mode_is 700 "$pki"
mode_is 600 "$pki/ca.key"
mode_is 644 "$pki/ca.crt"
check "ca.crt is a CA certificate" bash -c "openssl x509 -in '$pki/ca.crt' -noout -ext basicConstraints | grep -q 'CA:TRUE'"
check "ca.crt is valid for 3650 days" bash -c "openssl x509 -in '$pki/ca.crt' -noout -checkend $((3649 * 86400)) >/dev/null &&
  ! openssl x509 -in '$pki/ca.crt' -noout -checkend $((3651 * 86400)) >/dev/null"
key_pair "$pki/ca.crt" "$pki/ca.key"

# --- the daemon ------------------------------------------------------------------
run 0 daemon "$pki" localhost 127.0.0.1 ::1
check "daemon: one line per file written" [ "$(printf '%s\n' "$out" | grep -c '^wrote ')" -eq 2 ]
daemon=$pki/daemon.crt
verifies sslserver "$daemon"
verifies sslserver "$daemon" -verify_hostname localhost
verifies sslserver "$daemon" -verify_ip 127.0.0.1
verifies sslserver "$daemon" -verify_ip ::1
does_not_verify sslserver "$daemon" -verify_hostname gpu01.example.com
does_not_verify sslclient "$daemon"
subject_is "$daemon" localhost
eku_is "$daemon" "TLS Web Server Authentication"
san=$(openssl x509 -in "$daemon" -noout -ext subjectAltName 2>&1 | sed -n '2p' | sed 's/^ *//')
check "daemon.crt subjectAltName is DNS:localhost, IP 127.0.0.1, IP ::1 ($san)" \
  [ "$san" == "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1" ]
check "daemon.crt is valid for 825 days" bash -c "openssl x509 -in '$daemon' -noout -checkend $((824 * 86400)) >/dev/null &&
  ! openssl x509 -in '$daemon' -noout -checkend $((826 * 86400)) >/dev/null"
mode_is 600 "$pki/daemon.key"
mode_is 644 "$daemon"
key_pair "$daemon" "$pki/daemon.key"

# --- nodes and a user ----------------------------------------------------------------
run 0 node "$pki" gpu01 gpu-02.rack_1
check "node: one line per file written" [ "$(printf '%s\n' "$out" | grep -c '^wrote ')" -eq 4 ]
for node in gpu01 gpu-02.rack_1; do
  crt=$pki/nodes/$node.crt
  verifies sslclient "$crt"
  does_not_verify sslserver "$crt"
  subject_is "$crt" "node:$node"
  eku_is "$crt" "TLS Web Client Authentication"
  mode_is 600 "$pki/nodes/$node.key"
  mode_is 644 "$crt"
  key_pair "$crt" "$pki/nodes/$node.key"
done
run 0 user "$pki" alice --days 30
crt=$pki/users/alice.crt
verifies sslclient "$crt"
subject_is "$crt" alice
eku_is "$crt" "TLS Web Client Authentication"
check "alice.crt is valid for the 30 days of --days 30" bash -c "openssl x509 -in '$crt' -noout -checkend $((29 * 86400)) >/dev/null &&
  ! openssl x509 -in '$crt' -noout -checkend $((31 * 86400)) >/dev/null"
mode_is 600 "$pki/users/alice.key"
mode_is 644 "$crt"
key_pair "$crt" "$pki/users/alice.key"

# --- refusals --------------------------------------------------------------------
ca_key_sha=$(sha "$pki/ca.key")
ca_crt_sha=$(sha "$pki/ca.crt")
run 1 ca "$pki"
output_has "ca\.key already exists"
check "the second ca left ca.key unchanged" [ "$(sha "$pki/ca.key")" == "$ca_key_sha" ]
check "the second ca left ca.crt unchanged" [ "$(sha "$pki/ca.crt")" == "$ca_crt_sha" ]
run 2 ca "$pki" --force
check "ca --force left ca.key unchanged" [ "$(sha "$pki/ca.key")" == "$ca_key_sha" ]

users_before=$(ls -A "$pki/users")
run 2 user "$pki" bad:name
output_has "bad:name"
run 2 user "$pki" carol bad:name
output_has "bad:name"
check "a bad user name wrote nothing (not even carol's)" [ "$(ls -A "$pki/users")" == "$users_before" ]
run 2 node "$pki" "gpu 03"
check "a bad node name wrote nothing" [ ! -e "$pki/nodes/gpu 03.crt" ]

mkdir "$tmp/empty"
run 1 node "$tmp/empty" gpu01
output_has "$tmp/empty/ca\.key"
check "a missing CA wrote nothing" [ -z "$(ls -A "$tmp/empty")" ]

node_crt_sha=$(sha "$pki/nodes/gpu01.crt")
node_key_sha=$(sha "$pki/nodes/gpu01.key")
run 1 node "$pki" gpu01
output_has "gpu01\.crt already exists"
check "re-issuing without --force left gpu01.crt unchanged" [ "$(sha "$pki/nodes/gpu01.crt")" == "$node_crt_sha" ]
check "re-issuing without --force left gpu01.key unchanged" [ "$(sha "$pki/nodes/gpu01.key")" == "$node_key_sha" ]
run 0 node "$pki" gpu01 --force
check "--force replaced gpu01.crt" [ "$(sha "$pki/nodes/gpu01.crt")" != "$node_crt_sha" ]
check "--force replaced gpu01.key" [ "$(sha "$pki/nodes/gpu01.key")" != "$node_key_sha" ]
verifies sslclient "$pki/nodes/gpu01.crt"
subject_is "$pki/nodes/gpu01.crt" node:gpu01
mode_is 600 "$pki/nodes/gpu01.key"
key_pair "$pki/nodes/gpu01.crt" "$pki/nodes/gpu01.key"
no_temp_files

if ((failed > 0)); then
  echo "$passed passed, $failed failed"
  exit 1
fi
echo "$passed passed, 0 failed"
