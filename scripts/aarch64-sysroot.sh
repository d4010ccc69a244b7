#!/usr/bin/env bash
# Builds an arm64 (aarch64) sysroot for cross-building turbolb for the
# BlueField, from Debian bookworm's own arm64 packages: the -dev packages
# turbolb builds against and the closure of everything they depend on, as
# apt resolves it. The packages are downloaded with `apt-get download` and
# unpacked with `dpkg-deb -x`, never installed: libdpdk-dev:arm64 cannot be
# co-installed with the amd64 one through multiarch.
#
#   scripts/aarch64-sysroot.sh [DIR]     default DIR: build-aarch64-sysroot/
#
# Besides the sysroot, DIR/sysroot.ini: the second --cross-file that gives
# configs/cross/aarch64-linux-gnu.ini the sysroot's absolute path.
#
# apt runs with a private state under DIR/.apt (its own package lists, an
# empty dpkg status, APT::Architecture=arm64), so the host's dpkg and apt
# state is left alone: no `dpkg --add-architecture` and no root needed. The
# archive is the one the host's apt sources name (AARCH64_APT_SOURCES=FILE, a
# one-line-style .list or a deb822 .sources file, uses another).
#
# Cached: DIR/.turbolb-sysroot-stamp holds a hash of the package list and of
# this script's layout version; when it matches, the script does nothing (and
# needs no network). Delete the stamp, or DIR, to rebuild.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build-aarch64-sysroot}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# What turbolb builds against; their dependencies come from apt.
roots=(libdpdk-dev libbsd-dev libyaml-dev libcmocka-dev libevent-dev)
# Bump when the layout below changes, so that old sysroots are rebuilt.
layout=2

key=$(printf '%s\n' "layout=$layout" "arch=arm64" "${roots[@]}" | sha256sum | cut -c1-16)
stamp=$dir/.turbolb-sysroot-stamp

# The sysroot's absolute path, for configs/cross/aarch64-linux-gnu.ini (which
# leaves the constant `sysroot` to this file): written every time, so that a
# moved tree still configures (rewritten only when it changes, so that meson
# does not reconfigure for nothing).
case $dir in
*\'* | *\\*) echo "aarch64-sysroot: quotes or backslashes in $dir" >&2; exit 1 ;;
esac
printf '%s\n' "# Written by scripts/aarch64-sysroot.sh; pass it after" \
	"# configs/cross/aarch64-linux-gnu.ini to meson setup --cross-file." \
	"[constants]" "sysroot = '$dir'" >"$dir/sysroot.ini.tmp"
if cmp -s "$dir/sysroot.ini.tmp" "$dir/sysroot.ini"; then
	rm -f "$dir/sysroot.ini.tmp"
else
	mv "$dir/sysroot.ini.tmp" "$dir/sysroot.ini"
fi
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$key" ] &&
	[ -f "$dir/usr/lib/aarch64-linux-gnu/pkgconfig/libdpdk.pc" ]; then
	echo "aarch64-sysroot: up to date: $dir ($(($(wc -l <"$stamp") - 1)) packages)"
	exit 0
fi

say() { printf "aarch64-sysroot: [%3ds] %s\n" $((SECONDS - t0)) "$*"; }
t0=$SECONDS
rm -f "$stamp"

# --- a private apt for arm64 -------------------------------------------------
apt=$dir/.apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" \
	"$apt/sources.list.d"
: >"$apt/status"
src_conf=""
if [ -n "${AARCH64_APT_SOURCES:-}" ]; then
	rm -f "$apt/sources.list.d/"*
	case $AARCH64_APT_SOURCES in
	*.sources) cp "$AARCH64_APT_SOURCES" "$apt/sources.list.d/custom.sources" ;;
	*) cp "$AARCH64_APT_SOURCES" "$apt/sources.list.d/custom.list" ;;
	esac
	src_conf="Dir::Etc::SourceList \"/dev/null\"; Dir::Etc::SourceParts \"$apt/sources.list.d\";"
fi
sandbox=""
if [ "$(id -u)" -eq 0 ]; then
	# _apt cannot write into a root-owned build tree; download as root.
	sandbox='APT::Sandbox::User "root";'
fi
cat >"$apt/apt.conf" <<EOF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Dir::State "$apt";
Dir::State::Lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt/cache";
Acquire::Languages "none";
$sandbox
$src_conf
EOF
export APT_CONFIG=$apt/apt.conf

say "updating the arm64 package lists"
apt-get update -q -o APT::Get::List-Cleanup=true >"$apt/update.log" 2>&1 || {
	cat "$apt/update.log" >&2
	say "apt-get update failed" >&2
	exit 1
}
if ! apt-cache show libdpdk-dev >/dev/null 2>&1; then
	cat "$apt/update.log" >&2
	say "no arm64 libdpdk-dev in the configured apt sources" >&2
	exit 1
fi

# --- the dependency closure -------------------------------------------------
# With an empty dpkg status, a simulated install lists every package the roots
# need, Pre-Depends and all, each at the version apt would pick.
say "resolving the dependency closure of: ${roots[*]}"
apt-get -s -q install "${roots[@]}" >"$apt/resolve.log" 2>&1 || {
	cat "$apt/resolve.log" >&2
	say "apt could not resolve the arm64 dependencies" >&2
	exit 1
}
# "Inst NAME (VERSION SUITE [ARCH])"
mapfile -t pkgs < <(awk '$1 == "Inst" { v = $3; sub(/^\(/, "", v); print $2 "=" v }' \
	"$apt/resolve.log" | sort)
[ ${#pkgs[@]} -gt 0 ] || { say "empty dependency closure" >&2; exit 1; }
say "${#pkgs[@]} packages"

# --- download what is not here yet ------------------------------------------
# --print-uris: 'URI' FILENAME SIZE HASH, one a package.
apt-get download -q --print-uris "${pkgs[@]}" >"$apt/uris" 2>"$apt/uris.err" || {
	cat "$apt/uris.err" >&2
	exit 1
}
# FILENAME is NAME_VERSION_ARCH.deb, an epoch's colon written %3a.
need=()
while read -r _uri file _size _hash; do
	[ -f "$apt/debs/$file" ] && continue
	ver=${file#*_}
	ver=${ver%_*}
	need+=("${file%%_*}=${ver//%3a/:}")
done <"$apt/uris"
if [ ${#need[@]} -gt 0 ]; then
	say "downloading ${#need[@]} packages"
	(cd "$apt/debs" && apt-get download -q "${need[@]}" >"$apt/download.log" 2>&1) || {
		cat "$apt/download.log" >&2
		say "apt-get download failed" >&2
		exit 1
	}
fi
# Exactly the debs of this closure, each one present.
debs=()
while read -r _uri file _size _hash; do
	[ -f "$apt/debs/$file" ] || { say "missing $file after download" >&2; exit 1; }
	debs+=("$apt/debs/$file")
done <"$apt/uris"

# --- unpack -----------------------------------------------------------------
say "unpacking into $dir"
find "$dir" -mindepth 1 -maxdepth 1 ! -name .apt ! -name sysroot.ini -exec rm -rf {} +
# Independent archives: unpack them a few at a time on every core.
# shellcheck disable=SC2016 # $0 and $deb belong to the inner sh
printf '%s\0' "${debs[@]}" |
	xargs -0 -n 16 -P "$(nproc 2>/dev/null || echo 2)" \
		sh -c 'for deb; do dpkg-deb -x "$deb" "$0" || exit 255; done' "$dir"

# Merged /usr, as on bookworm: /lib, /bin, /sbin become links into usr/.
for d in lib bin sbin; do
	if [ -d "$dir/$d" ] && [ ! -L "$dir/$d" ]; then
		mkdir -p "$dir/usr/$d"
		cp -a "$dir/$d/." "$dir/usr/$d/"
		rm -rf "${dir:?}/$d"
	fi
	[ -e "$dir/$d" ] || ln -s "usr/$d" "$dir/$d"
done

# A sysroot is headers and libraries. The closure's programs (sed, tar, perl,
# dpkg: Pre-Depends) go: meson 1.0 puts the sysroot's bin/ at the front of
# PATH for a test whose arguments name a cross-built target, where an arm64
# sed would shadow the host's. Documentation goes too.
rm -rf "${dir:?}/usr/bin" "${dir:?}/usr/sbin" "${dir:?}/usr/games" \
	"${dir:?}/usr/share/doc" "${dir:?}/usr/share/man" \
	"${dir:?}/usr/share/info" "${dir:?}/usr/share/locale"

# Absolute symlinks (libz.so -> /lib/aarch64-linux-gnu/libz.so.1 and the
# like) would point into the host: make them relative, inside the sysroot.
n=0
while IFS= read -r -d '' link; do
	target=$(readlink "$link")
	case $target in
	/lib/* | /bin/* | /sbin/*) target=/usr$target ;;
	esac
	rel=$(realpath -m -s --relative-to="$(dirname "$link")" "$dir$target")
	ln -sfn "$rel" "$link"
	n=$((n + 1))
done < <(find "$dir" -path "$dir/.apt" -prune -o -type l -lname '/*' -print0)
say "made $n absolute symlinks relative"

# --- check ------------------------------------------------------------------
# The .pc files keep prefix=/usr: pkg-config's PKG_CONFIG_SYSROOT_DIR (meson
# sets it from the cross file's sys_root) puts the sysroot in front of every
# -I, -L and -isystem path. Check that this gives paths inside the sysroot
# and no x86 flag.
triplet=aarch64-linux-gnu
for f in usr/include/dpdk/rte_eal.h usr/include/bsd/string.h usr/include/yaml.h \
	usr/include/cmocka.h usr/lib/$triplet/librte_eal.so usr/lib/$triplet/librte_net_ring.so \
	usr/lib/$triplet/libc.so.6 usr/lib/ld-linux-aarch64.so.1 \
	usr/lib/$triplet/pkgconfig/libdpdk.pc; do
	[ -e "$dir/$f" ] || { say "incomplete: no $f" >&2; exit 1; }
done
flags=$(PKG_CONFIG_LIBDIR="$dir/usr/lib/$triplet/pkgconfig:$dir/usr/share/pkgconfig" \
	PKG_CONFIG_SYSROOT_DIR="$dir" \
	pkg-config --cflags --libs libdpdk libbsd yaml-0.1 cmocka libevent) || {
	say "pkg-config cannot use the sysroot's .pc files" >&2
	exit 1
}
for w in $flags; do
	case $w in
	-march=corei7* | -march=x86* | -m64 | -msse* | -mavx*)
		say "x86 flag in the arm64 pkg-config flags: $w" >&2
		exit 1
		;;
	-I/* | -L/*)
		case ${w:2} in
		"$dir"/*) ;;
		*) say "pkg-config path outside the sysroot: $w" >&2; exit 1 ;;
		esac
		;;
	esac
done
dangling=$(find "$dir" -path "$dir/.apt" -prune -o -xtype l -path "*/$triplet/*.so*" -print | head -5)
if [ -n "$dangling" ]; then
	say "dangling library links: $dangling" >&2
	exit 1
fi

{
	echo "$key"
	printf '%s\n' "${pkgs[@]}"
} >"$stamp"
say "done: ${#pkgs[@]} packages, $(du -sh --exclude=.apt "$dir" | cut -f1), $((SECONDS - t0)) s"
