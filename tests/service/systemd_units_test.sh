#!/usr/bin/env bash
# gpuschedd.service and gpusched-agent.service as `cmake --install` puts them
# (with the binaries and configs they name): `systemd-analyze verify` finds
# nothing to say, and the units keep their promises — Type=notify with a
# watchdog, restart on failure, state under /var/lib/gpusched, a sandboxed
# daemon, and an agent left free to start jobs as their users on the GPUs.
# Usage: systemd_units_test.sh BUILD_DIR
set -euo pipefail
build=$1
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP: systemd-analyze not found (Debian package: systemd; ./packaging/install-deps.sh installs it)"
  exit 77
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for component in daemon agent; do
  DESTDIR=$root cmake --install "$build" --prefix /usr --component "$component" >/dev/null
done
unit_dir=$root/lib/systemd/system
daemon_unit=$unit_dir/gpuschedd.service
agent_unit=$unit_dir/gpusched-agent.service
# verify --root looks for ExecStart's binary and for every unit the units pull
# in (multi-user.target, sysinit.target, ...) inside the root: lend it the
# host's unit files, without overwriting ours.
cp -an /lib/systemd/system/. "$unit_dir/"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# It reports unknown keys and bad values as warnings and still exits 0, so
# any output at all is a failure.
if ! out=$(systemd-analyze verify --root="$root" --man=no "$daemon_unit" "$agent_unit" 2>&1); then
  fail "systemd-analyze verify exited non-zero"
fi
if [[ -n ${out:-} ]]; then
  echo "$out"
  fail "systemd-analyze verify has something to say about the units"
fi

has() {  # has UNIT LINE: the unit has exactly this line
  grep -qxF -- "$2" "$1" || fail "$(basename "$1") lacks \"$2\""
}
lacks() {  # lacks UNIT KEY: the unit does not set KEY
  ! grep -q "^$2=" "$1" || fail "$(basename "$1") sets $2: $(grep "^$2=" "$1")"
}

for unit in "$daemon_unit" "$agent_unit"; do
  has "$unit" "Type=notify"
  has "$unit" "NotifyAccess=main"
  has "$unit" "Restart=on-failure"
  has "$unit" "StandardError=journal"
  grep -q '^WatchdogSec=[1-9]' "$unit" || fail "$(basename "$unit") has no WatchdogSec"
  grep -q '^StateDirectory=gpusched\b' "$unit" || fail "$(basename "$unit") keeps no state under /var/lib/gpusched"
done
has "$daemon_unit" "ExecStart=/usr/sbin/gpuschedd serve --config /etc/gpusched/gpuschedd.toml"
for line in "ProtectSystem=strict" "ProtectHome=yes" "PrivateTmp=yes" "PrivateDevices=yes" "NoNewPrivileges=yes" \
            "CapabilityBoundingSet=" "SystemCallFilter=@system-service"; do
  has "$daemon_unit" "$line"
done
has "$agent_unit" "ExecStart=/usr/sbin/gpusched-agent --config /etc/gpusched/agent.toml"
has "$agent_unit" "KillMode=process"  # jobs under their shims outlive an agent restart
has "$agent_unit" "LimitMEMLOCK=infinity"
# Each of these would stop jobs from running as their users, reaching the GPUs,
# their homes and /tmp, or using setuid helpers (see the unit's comments).
for key in User DynamicUser CapabilityBoundingSet PrivateDevices DevicePolicy DeviceAllow ProtectHome ProtectSystem \
           PrivateTmp NoNewPrivileges RestrictSUIDSGID ProtectClock ProtectKernelModules ProtectKernelTunables \
           MemoryDenyWriteExecute SystemCallFilter; do
  lacks "$agent_unit" "$key"
done

# The configs the units name are installed and pass the installed binaries' check.
"$root/usr/sbin/gpuschedd" check-config "$root/etc/gpusched/gpuschedd.toml" || fail "gpuschedd.toml does not check"
"$root/usr/sbin/gpusched-agent" check-config "$root/etc/gpusched/agent.toml" || fail "agent.toml does not check"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "ok: both units verify and keep their promises"
