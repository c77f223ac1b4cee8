#!/usr/bin/env bash
# Builds a cshell release into DIR (default: ./dist):
#   hack/release.sh [--arch amd64|arm64|all] [DIR]
# Without --arch it builds this machine's architecture. For each Linux
# architecture: the binary (linux-ARCH/cshell, with cgo:
# its container init is C), its Debian package cshell_VERSION_ARCH.deb with man
# pages, shell completions and docs (built with nfpm, a Go-native packager,
# pinned below and fetched through the Go module proxy); with --arch all
# also the darwin and windows binaries (no cgo there); then SHA256SUMS.
# VERSION is $CSHELL_VERSION, else the git tag vX.Y.Z on HEAD, else
# 0.0.0~gitYYYYMMDD.COMMIT (Debian sorts it before any release). arm64
# needs a cross C compiler: apt-get install gcc-aarch64-linux-gnu.
set -euo pipefail
cd "$(dirname "$0")/.."
NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2

command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
arch=$(go env GOHOSTARCH)
if [ "${1:-}" = "--arch" ]; then
	arch=${2:?--arch needs amd64, arm64 or all}
	shift 2
fi
case "$arch" in
amd64 | arm64) linux=("$arch") ;;
all) linux=(amd64 arm64) ;;
*) echo "hack/release.sh: --arch $arch: write amd64, arm64 or all" >&2; exit 2 ;;
esac
# Every Linux binary is built with cgo (its container init is C): another
# architecture needs its C cross compiler, asked for before anything is
# built.
for a in "${linux[@]}"; do
	[ "$a" = "$(go env GOHOSTARCH)" ] && continue
	cc=aarch64-linux-gnu-gcc pkg=gcc-aarch64-linux-gnu
	[ "$a" = amd64 ] && cc=x86_64-linux-gnu-gcc pkg=gcc-x86-64-linux-gnu
	command -v "$cc" >/dev/null || { echo "hack/release.sh: linux/$a needs the C cross compiler $cc, which this machine lacks: apt-get install $pkg (or build this machine's architecture alone: --arch $(go env GOHOSTARCH))" >&2; exit 1; }
done
if [ -e "${1:-dist}" ] && [ -n "$(ls -A "${1:-dist}")" ]; then
	echo "hack/release.sh: ${1:-dist} is not empty; give a new directory" >&2
	exit 2
fi
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)

commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
version=${CSHELL_VERSION:-}
if [ -z "$version" ]; then
	if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
		version=${tag#v}
	else
		version="0.0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || date +%Y%m%d).${commit:0:12}"
	fi
fi
case "$version" in
[0-9]*) ;;
*) echo "hack/release.sh: version $version must start with a digit (Debian's rule)" >&2; exit 2 ;;
esac
targets=$(printf 'linux/%s ' "${linux[@]}")
[ "$arch" = all ] && targets+="darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 "
echo "building cshell $version ($commit) for ${targets% } into $out"

# -trimpath: no build machine paths in the binary; -buildvcs: the commit
# and modified flag for cshell version, whatever GOFLAGS says.
flags=(-trimpath -buildvcs=true -ldflags "-s -w -X main.version=$version")
for a in "${linux[@]}"; do
	cc=gcc
	if [ "$a" != "$(go env GOHOSTARCH)" ]; then
		cc=aarch64-linux-gnu-gcc
		[ "$a" = amd64 ] && cc=x86_64-linux-gnu-gcc
	fi
	mkdir -p "$out/linux-$a"
	GOOS=linux GOARCH=$a CGO_ENABLED=1 CC=$cc go build "${flags[@]}" -o "$out/linux-$a/cshell" ./cmd/cshell
	echo "linux-$a/cshell"
done
if [ "$arch" = all ]; then
	for t in darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
		ext=
		[ "${t%/*}" = windows ] && ext=.exe
		mkdir -p "$out/${t/\//-}"
		GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go build "${flags[@]}" -o "$out/${t/\//-}/cshell$ext" ./cmd/cshell
		echo "${t/\//-}/cshell$ext"
	done
fi

# Man pages (gzipped, as Debian keeps them), completions, docs.
hack/gendocs.sh "$out/docs" >/dev/null
gzip -9n "$out"/docs/man/*.1
mkdir -p "$out/docs/doc"
cp README.md docs/cli.md docs/containers.md docs/ci.md "$out/docs/doc/"

for a in "${linux[@]}"; do
	# nfpm expands variables in some fields only: fill in the template.
	sed -e "s|\${CSHELL_ARCH}|$a|g" -e "s|\${CSHELL_VERSION}|$version|g" -e "s|\${CSHELL_DIST}|$out|g" \
		hack/release/nfpm.yaml >"$out/nfpm-$a.yaml"
	if ! go run "$NFPM" package --config "$out/nfpm-$a.yaml" --packager deb --target "$out/" >"$out/nfpm-$a.log" 2>&1; then
		grep -v '^go: downloading' "$out/nfpm-$a.log" >&2
		echo "hack/release.sh: nfpm could not make the $a package (its output is above)" >&2
		exit 1
	fi
	(cd "$out" && ls cshell_*_"$a".deb)
done
rm -rf "$out/docs" "$out"/nfpm-*.yaml "$out"/nfpm-*.log
(cd "$out" && find . -type f ! -name SHA256SUMS -printf '%P\n' | sort | xargs sha256sum >SHA256SUMS)
echo "SHA256SUMS"
