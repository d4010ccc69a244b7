#!/usr/bin/env bash
# The test command: set-up, configure, build (gcc, clang, gcc and clang
# release, ASan+UBSan) and run
# every test suite. Run from anywhere; builds live in build*/ at the top.
#
#   scripts/test.sh            everything
#   SUITES="unit" scripts/test.sh   only some suites in the main build
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

step() { printf '\n==> %s\n' "$*"; }

step "setup"
scripts/setup.sh

# configure DIR [meson args...]: set up once, reconfigure when it exists.
configure() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@"
	fi
}

step "build with gcc (build/)"
CC=gcc configure build
ninja -C build

step "build with clang (build-clang/)"
CC=clang configure build-clang
ninja -C build-clang

# What a DPU user builds: optimized, no debug, warnings still errors.
step "release builds with gcc and clang (build-release/, build-release-clang/)"
CC=gcc configure build-release -Dbuildtype=release
ninja -C build-release
CC=clang configure build-release-clang -Dbuildtype=release
ninja -C build-release-clang

step "build with ASan+UBSan (build-asan/)"
CC=gcc configure build-asan -Db_sanitize=address,undefined -Db_lundef=false
ninja -C build-asan

failed=0
suites=${SUITES:-}

step "formatting (clang-format)"
scripts/check-format.sh || failed=1

step "meson test (build/)"
suite_args=()
for s in $suites; do suite_args+=(--suite "$s"); done
meson test -C build --print-errorlogs -v "${suite_args[@]}" || failed=1

step "unit suite and in-process datapath tests under ASan+UBSan (build-asan/)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
meson test -C build-asan --print-errorlogs -v --suite unit || failed=1
meson test -C build-asan --print-errorlogs -v --logbase testlog-dp dp_ring dp_multi ||
	failed=1

step "pure-library tests under valgrind memcheck (build/)"
meson test -C build --print-errorlogs --setup valgrind --suite pure || failed=1

step "fuzz suite: libFuzzer targets and regressions (build-clang/)"
meson test -C build-clang --print-errorlogs -v --suite fuzz || failed=1

step "aarch64 (BlueField-2 Cortex-A72): cross build, unit and integration suites under qemu"
# The in-process net_ring tests are the DPDK smoke test under emulation.
# Suites that need real timing (fault) stay native.
AARCH64_SUITES=${AARCH64_SUITES:-"unit integration"} scripts/aarch64-test.sh || failed=1

step "summary"
python3 scripts/testlog_summary.py build/meson-logs/testlog.json \
	build/meson-logs/testlog-valgrind.json \
	build-asan/meson-logs/testlog.json build-asan/meson-logs/testlog-dp.json \
	build-clang/meson-logs/testlog.json \
	build-aarch64/meson-logs/testlog-aarch64-*.json
exit $failed
