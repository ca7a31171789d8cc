#!/usr/bin/env bash
# The .deb packages: CPack makes gpusched-daemon, gpusched-agent and
# gpusched-cli from the built tree, dpkg installs them into a scratch root
# (`dpkg --root`, with a fresh dpkg database there), and the test checks the
# control data, the installed files, conffile handling and that the installed
# binaries run `--version`.
#
# Why dpkg --root rather than a debootstrap chroot: the packages have no
# maintainer scripts, so dpkg needs no shell or libraries inside the root and
# a bare directory with an empty database is enough (--force-depends, since
# that database knows no libc); the binaries then run against the host's
# libraries, which are the ones their Depends name.
#
# Usage: deb_package_test.sh BUILD_DIR VERSION
set -euo pipefail
build=$1
version=$2
static_cli=${3:-0}  # 1: GPUSCHED_STATIC_CLI, the CLI then needs only the C library
for tool in cpack dpkg dpkg-deb dpkg-query dpkg-shlibdeps; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (dpkg-dev; ./packaging/install-deps.sh installs it)"
    exit 77
  fi
done
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  # dpkg sets root ownership on what it unpacks; fakeroot pretends it can.
  if ! command -v fakeroot >/dev/null 2>&1; then
    echo "SKIP: not root and no fakeroot to run dpkg --root with"
    exit 77
  fi
  as_root=(fakeroot)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# What `cmake --build build --target package` runs once everything is built
# (which it is when ctest runs), with the output kept out of the build tree.
if ! cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  echo "FAIL: cpack"
  exit 1
fi
arch=$(dpkg --print-architecture)
declare -A deb
for package in daemon agent cli; do
  deb[$package]=$work/out/gpusched-${package}_${version}_${arch}.deb
  if [[ ! -f ${deb[$package]} ]]; then
    ls "$work/out"
    echo "FAIL: no ${deb[$package]##*/}"
    exit 1
  fi
done

# Control data: names, version, dependencies found by dpkg-shlibdeps, conffiles.
for package in daemon agent cli; do
  file=${deb[$package]}
  [[ $(dpkg-deb -f "$file" Package) == "gpusched-$package" ]] || fail "$file: Package is $(dpkg-deb -f "$file" Package)"
  [[ $(dpkg-deb -f "$file" Version) == "$version" ]] || fail "$file: Version is $(dpkg-deb -f "$file" Version)"
  depends=$(dpkg-deb -f "$file" Depends)
  [[ $depends == *libc6* ]] || fail "gpusched-$package does not depend on libc6: $depends"
  # toml++ is compiled in from its headers (common/config).
  [[ $depends != *libtomlplusplus* ]] || fail "gpusched-$package depends on libtomlplusplus: $depends"
  if [[ ($package == agent || $package == daemon) && $static_cli == 1 ]]; then
    # The agent, its shim and the daemon are linked from the same static
    # archives (the C++ runtime stays shared: spdlog and prometheus-cpp need it).
    for lib in libgrpc libabsl libprotobuf; do
      [[ $depends != *"$lib"* ]] || fail "gpusched-$package is linked statically, yet depends on $lib: $depends"
    done
    continue
  fi
  if [[ $package == cli && $static_cli == 1 ]]; then
    for lib in libgrpc libabsl libprotobuf libstdc++; do
      [[ $depends != *"$lib"* ]] || fail "gpusched-cli is linked statically, yet depends on $lib: $depends"
    done
    # Not position-independent: the loader has no relocations to apply at
    # each start (40,000 in a PIE build, a third of --version's time).
    dpkg-deb -x "$file" "$work/cli-files"
    elf_type=$(readelf -h "$work/cli-files/usr/bin/gpusched" | awk '/Type:/ {print $2}')
    [[ $elf_type == EXEC ]] || fail "the packaged gpusched is not a fixed-address executable: ELF type $elf_type"
    continue
  fi
  for lib in libgrpc++ libabsl libprotobuf; do
    [[ $depends == *"$lib"* ]] || fail "gpusched-$package does not depend on $lib: $depends"
  done
done
# sd_notify is spoken without libsystemd, and libpq is loaded only for a
# PostgreSQL store: neither is mapped into an idle daemon or agent.
for package in daemon agent; do
  depends=$(dpkg-deb -f "${deb[$package]}" Depends)
  [[ $depends != *libsystemd0* ]] || fail "gpusched-$package depends on libsystemd0: $depends"
done
if [[ $static_cli != 1 ]]; then
  [[ $(dpkg-deb -f "${deb[daemon]}" Depends) == *libsqlite3* ]] || fail "gpusched-daemon does not depend on libsqlite3"
fi
[[ $(dpkg-deb -f "${deb[daemon]}" Depends) != *libpq5* ]] || fail "gpusched-daemon links libpq5"
# hwloc (and its libudev) is loaded only when an agent reads a real host:
# the agent's package depends on it, neither program links it.
[[ $(dpkg-deb -f "${deb[agent]}" Depends) == *libhwloc15* ]] || fail "gpusched-agent does not depend on libhwloc15"
for package in daemon agent; do
  dpkg-deb -x "${deb[$package]}" "$work/$package-files"
  program=$work/$package-files/usr/sbin/$([[ $package == daemon ]] && echo gpuschedd || echo gpusched-agent)
  dynamic=$(readelf -d "$program") || fail "readelf cannot read the packaged ${program##*/}"
  [[ $dynamic == *NEEDED* ]] || fail "the packaged ${program##*/} has no NEEDED entries: is it the program?"
  [[ $dynamic != *libhwloc* ]] || fail "the packaged ${program##*/} links libhwloc"
done
[[ $(dpkg-deb -f "${deb[daemon]}" Recommends) == *libpq5* ]] ||
  fail "gpusched-daemon does not recommend libpq5 (its PostgreSQL store loads it)"
declare -A config=([daemon]=gpuschedd.toml [agent]=agent.toml [cli]=cli.toml)
for package in daemon agent cli; do
  conffiles=$(dpkg-deb --ctrl-tarfile "${deb[$package]}" | tar -xO ./conffiles 2>/dev/null || true)
  [[ $conffiles == "/etc/gpusched/${config[$package]}" ]] || fail "gpusched-$package conffiles: '$conffiles'"
done

# Install into an empty root with its own dpkg database.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg_in_root() {
  "${as_root[@]}" dpkg --root="$root" --log="$work/dpkg.log" --force-depends --force-not-root "$@"
}
if ! dpkg_in_root -i "${deb[daemon]}" "${deb[agent]}" "${deb[cli]}" >"$work/dpkg.out" 2>&1; then
  cat "$work/dpkg.out"
  echo "FAIL: dpkg --root -i"
  exit 1
fi
query() { dpkg-query --admindir="$root/var/lib/dpkg" "$@"; }
for package in daemon agent cli; do
  status=$(query -W -f='${Status}' "gpusched-$package")
  [[ $status == "install ok installed" ]] || fail "gpusched-$package: $status"
  conffiles=$(query -W -f='${Conffiles}' "gpusched-$package")
  [[ $conffiles == *"/etc/gpusched/${config[$package]}"* ]] || fail "gpusched-$package registered conffiles: $conffiles"
done

for path in usr/sbin/gpuschedd usr/sbin/gpusched-agent usr/sbin/gpusched-shim usr/bin/gpusched; do
  [[ -x $root/$path ]] || fail "/$path is not installed as an executable"
done
for path in lib/systemd/system/gpuschedd.service lib/systemd/system/gpusched-agent.service \
            etc/gpusched/gpuschedd.toml etc/gpusched/agent.toml etc/gpusched/cli.toml; do
  [[ -f $root/$path ]] || fail "/$path is not installed"
done
[[ $(query -S /usr/sbin/gpuschedd 2>/dev/null) == "gpusched-daemon: /usr/sbin/gpuschedd" ]] ||
  fail "/usr/sbin/gpuschedd does not belong to gpusched-daemon"

# The installed binaries run, and say the packages' version.
for binary in usr/sbin/gpuschedd usr/sbin/gpusched-agent usr/bin/gpusched; do
  if ! out=$("$root/$binary" --version 2>&1); then
    fail "/$binary --version: $out"
  elif [[ $out != *"$version"* ]]; then
    fail "/$binary --version says '$out', the package is $version"
  else
    echo "ok: /$binary --version: $out"
  fi
done
"$root/usr/sbin/gpuschedd" check-config "$root/etc/gpusched/gpuschedd.toml" >/dev/null || fail "installed gpuschedd.toml"
"$root/usr/sbin/gpusched-agent" check-config "$root/etc/gpusched/agent.toml" >/dev/null || fail "installed agent.toml"

# Conffiles at work: an operator's edit survives reinstalling the package
# (keeping it, as `--force-confold` answers dpkg's question), and removing
# the package (without purging) leaves the configuration behind.
echo 'listen = "0.0.0.0:6870"' >>"$root/etc/gpusched/gpuschedd.toml"
dpkg_in_root --force-confold -i "${deb[daemon]}" >"$work/dpkg.out" 2>&1 || { cat "$work/dpkg.out"; fail "reinstall"; }
grep -q '^listen = "0.0.0.0:6870"$' "$root/etc/gpusched/gpuschedd.toml" || fail "reinstalling lost the edited gpuschedd.toml"
dpkg_in_root -r gpusched-daemon >"$work/dpkg.out" 2>&1 || { cat "$work/dpkg.out"; fail "remove"; }
[[ ! -e $root/usr/sbin/gpuschedd ]] || fail "removing gpusched-daemon left /usr/sbin/gpuschedd"
[[ -f $root/etc/gpusched/gpuschedd.toml ]] || fail "removing gpusched-daemon took its configuration"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "ok: 3 packages built, installed into a scratch root, run, reinstalled and removed"
