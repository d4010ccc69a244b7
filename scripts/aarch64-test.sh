#!/usr/bin/env bash
# The aarch64 (BlueField-2, Cortex-A72) build and its tests, on an x86 host:
# cross-builds everything (core library, turbolbd, tests) with -Werror and
# runs the unit and integration suites under qemu-aarch64-static.
#
#   scripts/aarch64-test.sh
#
# Steps: installs gcc-aarch64-linux-gnu and qemu-user-static when missing;
# builds (or reuses) the arm64 sysroot in build-aarch64-sysroot/
# (scripts/aarch64-sysroot.sh); configures build-aarch64/ with
# configs/cross/aarch64-linux-gnu.ini; ninja; meson test -v.
#
# Exits non-zero when something fails to build or a test fails. Exits 0
# without testing ("SKIP") only when the cross toolchain is missing and cannot
# be installed. Environment:
#   AARCH64_SYSROOT=DIR          where the sysroot lives (default
#                                build-aarch64-sysroot/ at the top)
#   AARCH64_SUITES="unit ..."    the meson test suites (default: unit integration)
#   AARCH64_TIMEOUT_MULTIPLIER=N meson's --timeout-multiplier (default 4:
#                                emulation on a small machine is slow)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

build="build-aarch64"
sysroot=${AARCH64_SYSROOT:-$top/build-aarch64-sysroot}
suites=${AARCH64_SUITES:-unit integration}
tmult=${AARCH64_TIMEOUT_MULTIPLIER:-4}
t_start=$SECONDS
step() { printf '\n==> [%4ds] %s\n' $((SECONDS - t_start)) "$*"; }

# --- the cross toolchain ---------------------------------------------------
step "cross toolchain"
tools_ok() {
	command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 &&
		command -v qemu-aarch64-static >/dev/null 2>&1
}
if ! tools_ok; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
	echo "installing gcc-aarch64-linux-gnu qemu-user-static"
	export DEBIAN_FRONTEND=noninteractive
	if ! { $sudo apt-get update -q &&
		$sudo apt-get install -y -q --no-install-recommends \
			gcc-aarch64-linux-gnu qemu-user-static; } >"${TMPDIR:-/tmp}/aarch64-toolchain.log" 2>&1 ||
		! tools_ok; then
		tail -n 20 "${TMPDIR:-/tmp}/aarch64-toolchain.log" >&2 || true
		echo "SKIP: aarch64 cross toolchain (gcc-aarch64-linux-gnu, qemu-user-static) missing and could not be installed; no aarch64 build or test ran"
		exit 0
	fi
fi
aarch64-linux-gnu-gcc --version | head -n1
qemu-aarch64-static --version | head -n1
for tool in meson ninja pkg-config dpkg-deb apt-get; do
	command -v "$tool" >/dev/null || {
		echo "aarch64-test: $tool missing (scripts/setup.sh installs the build tools)" >&2
		exit 1
	}
done

# --- the sysroot ---------------------------------------------------------
step "arm64 sysroot ($sysroot)"
scripts/aarch64-sysroot.sh "$sysroot"
sysroot=$(cd "$sysroot" && pwd)

# --- configure and build ---------------------------------------------------
step "configure $build/"
setup_args=(--cross-file "$top/configs/cross/aarch64-linux-gnu.ini"
	--cross-file "$sysroot/sysroot.ini" -Dwerror=true -Dtests=true -Ddpdk=enabled)
if [ -f "$build/build.ninja" ]; then
	meson setup --reconfigure "$build" "${setup_args[@]}" >"$build/reconfigure.log" 2>&1 || {
		echo "reconfigure failed (see below); configuring afresh"
		tail -n 5 "$build/reconfigure.log"
		rm -rf "$build"
		meson setup "$build" "${setup_args[@]}"
	}
else
	rm -rf "$build"
	meson setup "$build" "${setup_args[@]}"
fi

step "build $build/ (-Werror)"
ninja -C "$build"

# What DPDK's arm64 pkg-config flags put on the command line: an x86 -march
# must never be there (armv8-a+crc is Debian's, fine on the A72).
if grep -Eq -- '-march=(corei7|x86|native)|-m(sse|avx)' "$build/compile_commands.json"; then
	echo "aarch64-test: x86 code-generation flag in $build/compile_commands.json:" >&2
	grep -Eo -- '-march=(corei7|x86|native)[^ ]*|-m(sse|avx)[^ ]*' \
		"$build/compile_commands.json" | sort -u >&2
	exit 1
fi

# --- test under emulation ----------------------------------------------------
# Tests in the suite 'native' (network namespaces with af_packet, the kick
# agent's perf events and real-time boosts, the metrics endpoint and the
# 256-core daemon started by scripts that run the binaries themselves,
# dpdk-testpmd beside turbolbd) need the host's own binaries and are left
# out. One meson test per suite: the unit tests in parallel, then the integration
# tests (DPDK lcores that busy-poll, pinned to cores) one at a time, so that
# they do not compete with the CPU-heavy unit tests for the emulated cores.
failed=0
logs=()
for s in $suites; do
	jobs=()
	[ "$s" = unit ] || jobs=(--num-processes 1)
	step "meson test --suite $s under qemu-aarch64-static"
	rm -f "$build/meson-logs/testlog.json"
	meson test -C "$build" -v --print-errorlogs --timeout-multiplier "$tmult" \
		"${jobs[@]}" --suite "$s" --no-suite native || failed=1
	if [ -f "$build/meson-logs/testlog.json" ]; then
		cp "$build/meson-logs/testlog.json" "$build/meson-logs/testlog-aarch64-$s.json"
		logs+=("$build/meson-logs/testlog-aarch64-$s.json")
	else
		echo "aarch64-test: suite $s ran no test" >&2
		failed=1
	fi
done

step "summary"
python3 - "${logs[@]}" <<'PY'
import json, sys
p = f = s = 0
for path in sys.argv[1:]:
    for line in open(path):
        t = json.loads(line)
        r = t.get('result')
        if r in ('OK', 'EXPECTEDFAIL'):
            p += 1
        elif r == 'SKIP':
            s += 1
        else:
            f += 1
        mark = '' if r in ('OK', 'EXPECTEDFAIL', 'SKIP') else '   <-- FAILED'
        print(f"  {t.get('name'):<36} {r:<8} {t.get('duration', 0):7.2f} s{mark}")
print(f"aarch64: {p} passed, {f} failed, {s} skipped")
PY
echo "aarch64-test: $((SECONDS - t_start)) s in all"
exit $failed
