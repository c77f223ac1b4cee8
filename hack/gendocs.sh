#!/usr/bin/env bash
# Writes cshell's man pages (section 1) and shell completions (bash, zsh,
# fish) from the command tree, into DIR (default: ./build/docs):
#   hack/gendocs.sh [DIR]
# It builds cshell with the gendocs tag, which adds a hidden command that
# does the writing; the cshell users run has no such command.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/docs}
go run -tags gendocs ./cmd/cshell __gendocs "$out"
echo "man pages in $out/man, completions in $out/completions"
