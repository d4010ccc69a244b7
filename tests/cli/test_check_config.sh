#!/usr/bin/env bash
# turbolbd --check-config on every shipped config (exit 0, one-line summary,
# no warning), on every config that loads with a warning (exit 0, the
# summary, and FILE:LINE:COL: warning: as its "# expect-warning: LINE:COL
# TEXT" comment says) and on every bad config (exit 1, FILE:LINE:COL:
# message as its "# expect: LINE:COL WORD" comment says); --help and
# --version.
set -u
turbolbd=$1
src=$2
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }

for f in "$src"/configs/*.yaml; do
	out=$(${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config "$f" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
	   printf '%s' "$out" | grep -q "^$f: ok: policy "; then
		ok "good config $f"
	else
		bad "good config $f (rc=$rc): $out"
	fi
done

for f in "$src"/tests/configs/warn/*.yaml; do
	expect=$(sed -n 's/^# expect-warning: *//p' "$f" | head -1)
	pos=${expect%% *}
	text=${expect#* }
	err=$(${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config "$f" 2>&1 >/dev/null)
	out=$(${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config "$f" 2>/dev/null)
	rc=$?
	if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "^$f: ok: policy " &&
	   printf '%s' "$err" | grep -qF "$f:$pos: warning: $text"; then
		ok "warning config $(basename "$f") -> $pos $text"
	else
		bad "warning config $f (rc=$rc, want $pos '$text'): $out $err"
	fi
done

for f in "$src"/tests/configs/bad/*.yaml; do
	expect=$(sed -n 's/^# expect: *//p' "$f" | head -1)
	pos=${expect%% *}
	word=${expect#* }
	out=$(${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config "$f" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 1 ] && printf '%s' "$out" | grep -qF "$f:$pos: " &&
	   printf '%s' "$out" | grep -qiF -- "$word"; then
		ok "bad config $(basename "$f") -> $pos $word"
	else
		bad "bad config $f (rc=$rc, want $pos '$word'): $out"
	fi
done

out=$(${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config /nonexistent/turbolbd.yaml 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "/nonexistent/turbolbd.yaml"; then
	ok "missing file"
else
	bad "missing file (rc=$rc): $out"
fi

if ${MESON_EXE_WRAPPER:-} "$turbolbd" --help | grep -q -- "--check-config"; then ok "--help"; else bad "--help"; fi
if ${MESON_EXE_WRAPPER:-} "$turbolbd" --version | grep -Eq '^turbolbd [0-9]+\.[0-9]+'; then ok "--version"; else bad "--version"; fi
${MESON_EXE_WRAPPER:-} "$turbolbd" --bogus >/dev/null 2>&1
[ $? -eq 2 ] && ok "bad option exits 2" || bad "bad option exit code"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
