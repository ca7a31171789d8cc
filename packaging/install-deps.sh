#!/usr/bin/env bash
# Installs everything gpusched needs to build and test on Debian 12, from Debian's
# own archive only. Safe to run again: apt-get skips what is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  lld  # links the daemon and the agent with the code they run first (cmake/text_order.cmake)
  bolt-16 python3  # then moves the daemon's executed functions together, one by one (cmake/bolt_text_order.sh)
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev sqlite3 libcli11-dev libspdlog-dev libfmt-dev catch2
  libhwloc-dev
  libnghttp2-dev  # the CLI's unary calls straight over HTTP/2 (cli/h2_unary_call.h)
  libpq-dev   # the PostgreSQL store (store = "postgresql://..."): its header; libpq5 is loaded when the store is named
  postgresql  # tests: a real PostgreSQL server started in a temporary directory (initdb, pg_ctl)
  prometheus-cpp-dev  # /metrics: its data types (headers); tests compare with its library
  prometheus          # tests: a real Prometheus server and promtool check the metrics, config and alert rules
  gnuplot-nox  # gpuschedd simulate --out: PNG plots (optional: without it, CSVs and plots.gp only)
  libtomlplusplus-dev  # gpuschedd.toml, agent.toml, cli.toml, simulator cluster specs
  libssl-dev openssl   # TLS: certificate and key files checked at start; tests make certificates with openssl
  systemd              # tests: systemd-analyze verify on the units
  dpkg-dev fakeroot    # cmake --build build --target package (dpkg-shlibdeps); tests: dpkg --root installs
  procps psmisc
  clang-format  # tests: every C++ file as .clang-format writes it (Debian 12's clang-format 14)
  clang         # tests: clang's thread-safety analysis over the mutex-guarded code (the build itself uses GCC)
  podman runc busybox-static  # jobs in container images; tests import a busybox image (no registry needed)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
