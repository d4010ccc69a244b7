#!/usr/bin/env bash
# Fails, naming each file, when a C file of the tree differs from what
# clang-format 14 makes of it with the top-level .clang-format.
#
#   scripts/check-format.sh          check (the test command runs this)
#   scripts/check-format.sh --fix    format the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
cf=clang-format-14
command -v "$cf" >/dev/null || cf=clang-format
mapfile -t files < <(git ls-files '*.c' '*.h')
if [ "${1:-}" = --fix ]; then
	"$cf" -i "${files[@]}"
	exit 0
fi
bad=()
for f in "${files[@]}"; do
	"$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
	echo "check-format: ${#bad[@]} file(s) differ from clang-format ($cf):"
	printf '  %s\n' "${bad[@]}"
	echo "check-format: run scripts/check-format.sh --fix"
	exit 1
fi
echo "check-format: ${#files[@]} files formatted"
