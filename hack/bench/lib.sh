# shellcheck shell=bash
# Helpers the benchmark scripts share; source it, then set USER_TMP_ROOT
# (each user's TMPDIR is $USER_TMP_ROOT/USER/tmp) and SAFE_PATH.

# as_user USER DIR CMD...: run CMD as USER in DIR with a clean environment.
as_user() {
	local user=$1 dir=$2 home
	shift 2
	home=$(getent passwd "$user" | cut -d: -f6)
	local -a run=(env -i -C "$dir" HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash
		PATH="$SAFE_PATH" LANG=C.UTF-8 TMPDIR="$USER_TMP_ROOT/$user/tmp" "$@")
	if [ "$(id -u "$user")" = 0 ]; then
		"${run[@]}"
	else
		setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups "${run[@]}"
	fi
}
