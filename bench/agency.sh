#!/bin/sh
# The agency scale: a simulated month of 500 senders (one in five a
# mailbox) over 50 clients and 200,000 leads, on a new database, with the
# sandbox's audit (docs/PERFORMANCE.md's goal: under 10 minutes on each
# engine, 0 violations).
#
#   bench/agency.sh                          # SQLite, /tmp/leadline-agency.db
#   bench/agency.sh sqlite /path/to/file.db
#   bench/agency.sh postgres                 # postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
#   bench/agency.sh postgres 'postgres://user@host:5432/postgres?sslmode=disable'
#
# On Postgres the URL names a database to connect to on the server; the run
# gets a new database of its own there, leadline_agency, dropped before and
# after. Flags after the engine and location go to bench/engineload
# (--cpuprofile FILE, --report FILE, --sim-leads N, …).
set -eu
engine=${1:-sqlite}
[ $# -gt 0 ] && shift
where=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	where=$1
	shift
fi
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/engineload
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/engineload
size="--simulation-only --sim-senders 500 --sim-clients 50 --sim-leads 200000"
case $engine in
sqlite)
	db=${where:-/tmp/leadline-agency.db}
	rm -f "$db" "$db-wal" "$db-shm"
	# shellcheck disable=SC2086
	"$bin" $size --db "$db" "$@"
	rm -f "$db" "$db-wal" "$db-shm"
	;;
postgres)
	server=${where:-'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'}
	dsn=$(printf '%s' "$server" | sed -E 's#^(postgres(ql)?://[^/?]*)(/[^?]*)?#\1/leadline_agency#')
	psql "$server" -q -c 'DROP DATABASE IF EXISTS leadline_agency' -c 'CREATE DATABASE leadline_agency'
	# shellcheck disable=SC2086
	"$bin" $size --db "$dsn" "$@"
	psql "$server" -q -c 'DROP DATABASE IF EXISTS leadline_agency'
	;;
*)
	echo "usage: bench/agency.sh [sqlite [FILE] | postgres [URL]] [engineload flags]" >&2
	exit 2
	;;
esac
