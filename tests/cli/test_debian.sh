#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages (debian/): built by dpkg-buildpackage from a copy of
# the source tree (it writes debian/ build files in the tree and the .debs
# in its parent, so never in the checkout), checked by lintian, unpacked
# with dpkg -x into a throwaway root, and the installed files run from
# there:
#   - every .deb's version is the project's version;
#   - /etc/turbolb/turbolbd.yaml is a conffile; the maintainer scripts
#     neither enable nor start the unit on install, keep an operator's
#     enablement and restart a running daemon on upgrade, stop it on
#     removal;
#   - turbolbd, turbolbctl and turbolb-sim print "NAME VERSION" for
#     --version; the tools without --version (turbolb-server,
#     turbolb-kickd, turbolb-loadgen, turbolb-bench) run --help, and those
#     that link libturbolb-host resolve it to the packaged copy;
#   - the installed turbolbd --check-config accepts the installed config;
#   - systemd-analyze verify --root accepts the installed unit, its
#     ExecStart resolved to the packaged turbolbd.
# dpkg -x rather than dpkg -i: dpkg -i here would install into the CI
# machine itself, and a debootstrap chroot would cost minutes and a few
# hundred MB a run. The maintainer scripts that matter (the unit's
# enablement) run against the root through DPKG_ROOT. The binaries run with
# LD_LIBRARY_PATH pointing into the root; DPDK and the other dependencies
# come from the machine (scripts/setup.sh installs them).
#
#   test_debian.sh SRCDIR VERSION
set -u
src=$1
version=$2
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }

for tool in dpkg-buildpackage dh lintian; do
	if ! command -v $tool >/dev/null; then
		echo "not ok - $tool not found: run scripts/setup.sh"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlb-deb-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/turbolb
mkdir -p "$tree"

# The tracked and new files of the checkout, none of its build trees.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -co --exclude-standard -z |
		xargs -0 cp -P --parents -t "$tree")
else
	(cd "$src" && tar -c --exclude='./build*' --exclude=./.git .) |
		tar -x -C "$tree"
fi

# nocheck: the test command runs every suite on this tree already.
start=$(date +%s)
if (cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($(($(date +%s) - start)) s)"
else
	bad "dpkg-buildpackage failed; its log ends:"
	tail -40 "$tmp/build.log"
	echo "$pass passed, $fail failed"
	exit 1
fi

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
packages="turbolb libturbolb-host0 libturbolb-host-dev turbolb-host-tools
	turbolb-bench-tools"
debs=()
for p in $packages; do
	deb=$tmp/${p}_${version}_${arch}.deb
	if [ -f "$deb" ]; then
		debs+=("$deb")
		v=$(dpkg-deb -f "$deb" Version)
		if [ "$v" = "$version" ]; then
			ok "$p $v built"
		else
			bad "$p is version $v, the project $version (debian/changelog)"
		fi
	else
		bad "$p: no ${deb##*/} (built: $(cd "$tmp" && echo *.deb))"
	fi
done

# Errors and warnings fail; the info tags kept are in debian/README.source.
if lintian --fail-on error,warning \
	"$tmp"/*.deb >"$tmp/lintian.log" 2>&1; then
	ok "lintian: no errors or warnings"
else
	bad "lintian:"
	grep -v 'running with root privileges' "$tmp/lintian.log"
fi

root=$tmp/root
mkdir -p "$root"
for deb in "${debs[@]}"; do
	dpkg -x "$deb" "$root"
done

# The configuration survives upgrades with the operator's edits.
deb_turbolb=$tmp/turbolb_${version}_${arch}.deb
conffiles=$(dpkg-deb -I "$deb_turbolb" conffiles 2>/dev/null)
if [ "$conffiles" = /etc/turbolb/turbolbd.yaml ]; then
	ok "conffile /etc/turbolb/turbolbd.yaml"
else
	bad "conffiles: '$conffiles'"
fi
if cmp -s "$root/etc/turbolb/turbolbd.yaml" "$src/configs/turbolbd.yaml"; then
	ok "installed config is configs/turbolbd.yaml"
else
	bad "installed config differs from configs/turbolbd.yaml"
fi

# Installed, not enabled nor started: dh_installsystemd --no-enable
# --no-start writes only the daemon-reload and state bookkeeping.
unit=$root/lib/systemd/system/turbolbd.service
if [ -f "$unit" ]; then
	ok "unit installed at /lib/systemd/system/turbolbd.service"
else
	bad "no /lib/systemd/system/turbolbd.service"
fi
# The maintainer scripts, run for real against the throwaway root:
# deb-systemd-helper keeps its links and state under $DPKG_ROOT, and the
# scripts skip every systemctl and start/stop call when DPKG_ROOT is set.
# A first install must leave the unit disabled; an
# operator's "enable" (done with the same helper, which also shows the
# check can see an enabled unit) survives an upgrade; purge removes it.
ctrl=$tmp/control
dpkg-deb -e "$deb_turbolb" "$ctrl"
wants=$root/etc/systemd/system/multi-user.target.wants/turbolbd.service
maint() { # SCRIPT ARGS...
	DPKG_ROOT=$root DPKG_MAINTSCRIPT_PACKAGE=turbolb DPKG_MAINTSCRIPT_NAME=$1 \
		"$@" >>"$tmp/maint.log" 2>&1
}
if [ ! -f "$ctrl/postinst" ]; then
	bad "turbolb has no postinst (dh_installsystemd did not see the unit)"
else
	if maint sh "$ctrl/postinst" configure && [ ! -e "$wants" ] &&
		[ -e "$root/var/lib/systemd/deb-systemd-helper-enabled/turbolbd.service.dsh-also" ]; then
		ok "first install: unit known to deb-systemd-helper, not enabled"
	else
		bad "first install enabled the unit or failed: $(cat "$tmp/maint.log")"
	fi
	if maint deb-systemd-helper enable turbolbd.service && [ -L "$wants" ] &&
		maint sh "$ctrl/postinst" configure "$version" && [ -L "$wants" ]; then
		ok "upgrade: a unit the operator enabled stays enabled"
	else
		bad "enabled unit across an upgrade: $(cat "$tmp/maint.log")"
	fi
	if maint sh "$ctrl/postrm" purge && [ ! -e "$wants" ]; then
		ok "purge: the enablement link is removed"
	else
		bad "purge left $wants: $(cat "$tmp/maint.log")"
	fi
fi

# What the scripts start and stop under a running systemd, with the
# helpers replaced by stubs that log their calls (so the machine's systemd
# is never touched) and /run/systemd/system by a folder of the test's:
# nothing on a first install, a try-restart (only a running daemon comes
# back, on the new binary) and no stop before an upgrade, a stop on
# removal.
mkdir -p "$tmp/stubs" "$tmp/run-systemd"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 0\n' "$c" "$tmp/calls" >"$tmp/stubs/$c"
	chmod +x "$tmp/stubs/$c"
done
invokes() { # SCRIPT ARGS...: the deb-systemd-invoke calls SCRIPT makes
	: >"$tmp/calls"
	[ -f "$ctrl/$1" ] || return 0
	sed "s|/run/systemd/system|$tmp/run-systemd|g" "$ctrl/$1" >"$tmp/script"
	PATH=$tmp/stubs:$PATH sh "$tmp/script" "${@:2}" >/dev/null 2>&1
	grep '^deb-systemd-invoke' "$tmp/calls" | tr '\n' ';'
}
got="install: $(invokes postinst configure) upgrade: $(invokes preinst upgrade "$version")$(invokes prerm upgrade "$version")$(invokes postinst configure "$version") remove: $(invokes prerm remove)"
want="install:  upgrade: deb-systemd-invoke try-restart turbolbd.service; remove: deb-systemd-invoke stop turbolbd.service;"
if [ "$got" = "$want" ]; then
	ok "unit not started on install, try-restarted on upgrade, stopped on removal"
else
	bad "start/stop calls: got '$got', want '$want'"
fi

export LD_LIBRARY_PATH=$root/usr/lib/$multiarch
for b in turbolbd turbolbctl turbolb-sim; do
	out=$("$root/usr/bin/$b" --version 2>&1)
	if [ "$out" = "$b $version" ]; then
		ok "installed $b --version: $out"
	else
		bad "installed $b --version: '$out', expected '$b $version'"
	fi
done
for b in turbolb-server turbolb-kickd turbolb-loadgen turbolb-bench; do
	if timeout 30 "$root/usr/bin/$b" --help >"$tmp/help.log" 2>&1; then
		ok "installed $b --help (no --version option)"
	else
		bad "installed $b --help: $(tail -3 "$tmp/help.log")"
	fi
done
for b in turbolb-server turbolb-bench; do
	lib=$(ldd "$root/usr/bin/$b" | awk '/libturbolb-host.so.0/ { print $3 }')
	if [ "$lib" = "$root/usr/lib/$multiarch/libturbolb-host.so.0" ]; then
		ok "$b links the packaged libturbolb-host.so.0"
	else
		bad "$b resolves libturbolb-host.so.0 to '$lib'"
	fi
done
# The -dev package: the .pc points at the header and the library.
pc=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$multiarch/pkgconfig \
	pkg-config --cflags --libs turbolb-host 2>&1)
if [ -f "$root/usr/include/turbolb/host.h" ] &&
	[ -L "$root/usr/lib/$multiarch/libturbolb-host.so" ] &&
	[[ "$pc" == *"-lturbolb-host"* ]]; then
	ok "libturbolb-host-dev: host.h, .so link, pkg-config: $pc"
else
	bad "libturbolb-host-dev: pkg-config says '$pc'"
fi

if out=$("$root/usr/bin/turbolbd" --check-config "$root/etc/turbolb/turbolbd.yaml" 2>&1); then
	ok "installed turbolbd --check-config installed turbolbd.yaml"
else
	bad "installed turbolbd --check-config: $out"
fi

# --root resolves the unit's ExecStart=/usr/bin/turbolbd and its config
# inside the throwaway root. The root gets what the base system provides
# there: systemd's own units (sysinit.target and the rest) and /bin/kill
# (ExecReload); the unit file is the packaged one.
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$root/bin" "$root/usr/lib/systemd/system"
	cp /bin/kill "$root/bin/kill"
	cp -rn /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/"
	out=$(systemd-analyze verify --root="$root" turbolbd.service 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then
		ok "systemd-analyze verify --root on the installed unit"
	else
		bad "systemd-analyze verify (rc=$rc): $out"
	fi
else
	echo "ok - systemd-analyze not on this machine (Debian package: systemd): the installed unit is NOT verified # SKIP"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
