#!/bin/bash
# What telling refused writes costs: a shell whose filter hands its opens
# with write intent to cshell (every shell with a state dir: the egress's
# listener is cshell's) against the same shell without it (no proxy and no
# grants: network.allowGrants false, nothing allowed), and the same work
# on this machine, in one run, as root:
#   files    a shell script that unpacks 5,000 files from a tar archive and
#            writes 5,000 more with python (10,000 opens with write intent)
#   opens    python timing 20,000 write opens and 20,000 read opens of one
#            file (microseconds each, printed by the shell)
#
# usage (as root):  bash hack/bench/writes.sh [ROUNDS]   (default 5)
#   CSHELL_BIN=path time this cshell binary instead of building the checkout
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ $# -le 1 ] || die "usage: bash hack/bench/writes.sh [ROUNDS]  (default 5)"
parse_rounds 5 5 "${1:-}"
((EUID == 0)) || die "run me as root"

W=$(work_dir /var/tmp/cshell-writes.XXXXXX) || exit 1
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	rm -rf --one-file-system -- "$W"
	drop_run_cshell
}
trap cleanup EXIT
build_cshell "$W"
mkdir "$W/src" "$W/state"
"$PY" - "$W" <<'PY'
import os, sys
for i in range(5000):
    with open(os.path.join(sys.argv[1], "src", f"f{i}"), "w") as f:
        f.write("x" * 1024)
PY
tar -C "$W" -cf "$W/files.tar" src && rm -rf "$W/src"
cat >"$W/files.sh" <<'SH'
rm -rf out && mkdir out && cd out && tar -xf ../files.tar && /usr/bin/python3 -c "
for i in range(5000):
    with open(f'p{i}', 'w') as f: f.write('y')
"
SH
cat >"$W/opens.py" <<'PY'
import os, time
n = 20000
t = time.perf_counter()
for i in range(n):
    os.close(os.open("obfile", os.O_WRONLY | os.O_CREAT, 0o644))
w = (time.perf_counter() - t) / n * 1e6
t = time.perf_counter()
for i in range(n):
    os.close(os.open("obfile", os.O_RDONLY))
print(f"{w:.1f} {(time.perf_counter() - t) / n * 1e6:.1f}")
PY
echo '{"network": {"allowGrants": false}}' >"$W/nogrants.json"
cs="$W/cshell --state-dir $W/state"

echo "# writes.sh: cshell $(cshell_rev), $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
"$PY" "$REPO/hack/bench/abtime.py" -n "$ROUNDS" -w 1 --vs untold --title "10,000 files written in a shell" \
	"told=$cs run -w $W -- bash files.sh" \
	"untold=$cs --config $W/nogrants.json run -w $W -- bash files.sh" \
	"host=bash -c 'cd $W && bash files.sh'"

echo "# microseconds an open takes in a shell (median of $ROUNDS shells): write open, read open"
for label in told untold; do
	cfg=()
	[ "$label" = untold ] && cfg=(--config "$W/nogrants.json")
	for _ in $(seq "$ROUNDS"); do $cs "${cfg[@]}" run -w "$W" -- /usr/bin/python3 opens.py; done |
		sort -n | awk -v l="$label" '{w[NR]=$1; r[NR]=$2} END {m=int((NR+1)/2); printf "%-8s write %6.1f  read %6.1f\n", l, w[m], r[m]}'
done
