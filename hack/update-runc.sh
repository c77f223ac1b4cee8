#!/usr/bin/env bash
# Remakes third_party/runc, cshell's copy of the runc packages it builds
# on (libcontainer and what it imports of runc), from runc VERSION with
# third_party/runc.patch applied:
#   hack/update-runc.sh            the version in third_party/runc/VERSION
#   hack/update-runc.sh v1.5.4     another release
#   hack/update-runc.sh --check    exit 1 when third_party/runc is not
#                                  exactly its release with the patch
# go.mod replaces github.com/opencontainers/runc with the copy. Why there
# is a patch at all: docs/architecture.md, "Why these choices". After an
# update: go mod tidy, the tests, and a look at the release's notes.
set -euo pipefail
die() { echo "hack/update-runc.sh: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."
mod=github.com/opencontainers/runc
dst=third_party/runc
check=
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
ver=${1:-$(cat "$dst/VERSION" 2>/dev/null || true)}
[ -n "$ver" ] || die "no version given and no $dst/VERSION: name one, e.g. hack/update-runc.sh v1.5.3"
for tool in go patch; do command -v "$tool" >/dev/null || die "$tool not found"; done

src=$(go mod download -json "$mod@$ver" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || die "go mod download $mod@$ver gave no source directory"

# The packages cshell imports, found against the release itself (a go.mod
# of our own without the replace), for linux with and without cgo, tests
# included.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp go.mod "$tmp/go.mod"
cp go.sum "$tmp/go.sum"
go mod edit -modfile="$tmp/go.mod" -dropreplace="$mod" -require="$mod@$ver"
pkgs=$(for cgo in 0 1; do
	GOFLAGS=-mod=mod GOOS=linux CGO_ENABLED=$cgo go list -modfile="$tmp/go.mod" -deps -test \
		-f '{{if .Module}}{{.Module.Path}} {{.ImportPath}}{{end}}' ./... | awk -v m="$mod" '$1 == m { print $2 }'
done | sort -u)
[ -n "$pkgs" ] || die "go list found no package of $mod that cshell imports"

# Then what those import of runc in any of their files (go mod tidy reads
# every build tag), until nothing new turns up.
while :; do
	more=$(for p in $pkgs; do
		cat "$src/${p#"$mod"/}"/*.go 2>/dev/null
	done | grep -o "\"$mod/[^\"]*\"" | tr -d '"' | sort -u)
	all=$(printf '%s\n%s\n' "$pkgs" "$more" | sort -u)
	[ "$all" = "$pkgs" ] && break
	pkgs=$all
done

new=$tmp/runc
mkdir -p "$new"
cp "$src/go.mod" "$src/LICENSE" "$src/NOTICE" "$new/"
for p in $pkgs; do
	rel=${p#"$mod"/}
	mkdir -p "$new/$rel"
	find "$src/$rel" -maxdepth 1 -type f \( -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.s' \) \
		! -name '*_test.go' -exec cp {} "$new/$rel/" \;
done
chmod -R u+w "$new"
echo "$ver" >"$new/VERSION"
patch -s -d "$new" -p1 <third_party/runc.patch || die "third_party/runc.patch does not apply to $ver: remake it against that release"
if [ -n "$check" ]; then
	diff -r "$new" "$dst" >&2 || die "$dst is not runc $ver with third_party/runc.patch: change the patch, not the copy, and run hack/update-runc.sh"
	echo "$dst: runc $ver with third_party/runc.patch"
	exit 0
fi
rm -rf "$dst"
cp -r "$new" "$dst"
echo "$dst: $(wc -l <<<"$pkgs") packages of runc $ver, patched"
