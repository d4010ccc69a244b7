#!/usr/bin/env bash
# Installs everything turbolb needs to build and test on Debian bookworm.
# Idempotent and non-interactive: safe to run again.
set -euo pipefail

packages=(
	build-essential gcc clang pkg-config meson ninja-build
	libdpdk-dev dpdk-dev dpdk
	libbsd-dev libcmocka-dev libyaml-dev libjansson-dev libevent-dev
	python3-prometheus-client python3-pyflakes
	python3 iproute2 gnuplot-nox valgrind systemd tshark libclang-rt-14-dev
	# scripts/check-format.sh: the tree is formatted with clang-format 14
	clang-format-14
	# The Debian packages (debian/, tests/cli/test_debian.sh); dpkg-dev
	# comes with build-essential.
	debhelper lintian
	# The peers suite (tests/peers/): real servers and clients in network
	# namespaces, veth offloads set with ethtool
	nsd dnsperf memcached libmemcached-tools ethtool
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#packages[@]} packages already installed"
	exit 0
fi

echo "setup: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture: they may not.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	$sudo debconf-set-selections
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
