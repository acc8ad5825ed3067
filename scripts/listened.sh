# Sourced by the scripts that start leadline on loopback. They pass port 0
# (`--addr 127.0.0.1:0`, `--metrics-addr 127.0.0.1:0`) so that the kernel
# picks a free port: a port chosen at random can be held by another program
# or by an outgoing connection's ephemeral port, and the process then stops.
# leadline prints each address it listens on; listened reads it back.
#
#   url=$(listened LOG 'leadline serving' PID) || fail "…"
#
# waits up to 20 s for the line in LOG that starts with the given words and
# prints the first http://host:port in it. It fails at once when PID has
# stopped.
listened() {
  local log=$1 words=$2 pid=$3 line
  for _ in $(seq 1 200); do
    line=$(grep -m 1 "^$words " "$log" 2>/dev/null || true)
    if [ -n "$line" ]; then
      printf '%s\n' "$line" | grep -o -m 1 'http://[^/ ]*'
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
