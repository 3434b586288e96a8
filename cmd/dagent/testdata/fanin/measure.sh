#!/bin/sh
# Peak RSS of the fan-in run (20 outputs of 8 MiB into one sink), three
# runs each of text and --format json, journaled and with --no-journal.
# Usage: measure.sh DAGENT_BINARY (GNU time at /usr/bin/time).
set -e
bin=$(realpath "$1")
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cfg in "text journal" "text nojournal" "json journal" "json nojournal"; do
	set -- $cfg
	args="--registry registry.yaml --db $tmp/dagent.db"
	[ "$1" = json ] && args="$args --format json"
	[ "$2" = nojournal ] && args="$args --no-journal"
	r=""
	for i in 1 2 3; do
		rm -f "$tmp"/dagent.db*
		/usr/bin/time -v "$bin" run $args plan.json >/dev/null 2>"$tmp/time"
		r="$r $(awk '/Maximum resident/ {printf "%d", $6/1024}' "$tmp/time")"
	done
	echo "$cfg:$r MB"
done
