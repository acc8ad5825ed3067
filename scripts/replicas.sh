#!/usr/bin/env bash
# Two API replicas and two worker replicas on one Postgres, a short load
# through the API, and a check that no action ran twice (docs/DEPLOY.md).
#
#   scripts/replicas.sh            (LEADLINE_REPLICAS_LEADS=120 by default)
#
# It uses the Postgres on 127.0.0.1:5432 ($LEADLINE_TEST_POSTGRES when set),
# creates a database of its own and drops it at the end. Everything stays
# on loopback; the senders use the sandbox transport, are always open and
# have no spacing or hourly cap (docs/GUARDS.md), so the runners work on
# wall time and the run takes well under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

admin="${LEADLINE_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
leads="${LEADLINE_REPLICAS_LEADS:-120}"
name="leadline_replicas_$$_$RANDOM"
dsn=$(printf '%s' "$admin" | sed -E "s#/[^/?]*(\?|$)#/$name\1#")
tmp=$(mktemp -d)
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  psql -q "$admin" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "replicas: $*"; for f in "$tmp"/*.log; do echo "--- $f"; tail -n 20 "$f"; done; exit 1; }

psql -q "$admin" -c "CREATE DATABASE $name" >/dev/null
go build -o "$tmp/leadline" ./cmd/leadline
ll="$tmp/leadline"
export LEADLINE_DB="$dsn"
LEADLINE_SECRET_KEY=$(head -c 32 /dev/urandom | base64)
export LEADLINE_SECRET_KEY

cat >"$tmp/setup.yaml" <<'YAML'
workspaces:
  - name: load
    timezone: UTC
    plan: pro
    members: [{email: owner@load.test, role: owner}]
    senders:
      - {name: li-1, channel: linkedin, transport: sandbox, schedule: {mon-sun: ["00:00-24:00"]}, caps: {profile_view: 150}, spacing: {min: 0s, max: 0s}}
      - {name: li-2, channel: linkedin, transport: sandbox, schedule: {mon-sun: ["00:00-24:00"]}, caps: {profile_view: 150}, spacing: {min: 0s, max: 0s}}
      - {name: mail-1, channel: email, transport: sandbox, address: one@load.test, schedule: {mon-sun: ["00:00-24:00"]}, caps: {email: 150}, spacing: {min: 0s, max: 0s}, hourly_cap: 0}
      - {name: mail-2, channel: email, transport: sandbox, address: two@load.test, schedule: {mon-sun: ["00:00-24:00"]}, caps: {email: 150}, spacing: {min: 0s, max: 0s}, hourly_cap: 0}
    sequences:
      - name: Load
        senders: [li-1, li-2, mail-1, mail-2]
        steps:
          - {id: visit, type: profile_view}
          - {id: mail, type: email, subject: "Hello {{first_name|there}}", body: "A short note."}
YAML
"$ll" migrate >/dev/null
"$ll" apply -f "$tmp/setup.yaml" >/dev/null
key=$("$ll" keys create --workspace load --member owner@load.test --role manager --json | jq -r .key)

# Each process listens on a port the kernel picks (scripts/listened.sh).
. scripts/listened.sh
api=() ; metrics=()
for i in 1 2; do
  "$ll" serve --runner=false --addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 >"$tmp/serve$i.log" 2>&1 &
  pids+=($!)
  u=$(listened "$tmp/serve$i.log" 'leadline serving' "${pids[-1]}") || fail "API replica $i did not start"
  api+=("$u")
  "$ll" work --tick 1s --metrics-addr 127.0.0.1:0 >"$tmp/work$i.log" 2>&1 &
  pids+=($!)
  m=$(listened "$tmp/work$i.log" 'leadline metrics at' "${pids[-1]}") || fail "worker $i did not start"
  metrics+=("$m/metrics")
done
for u in "${api[@]}"; do
  for _ in $(seq 1 100); do curl -sf "$u/healthz" >/dev/null && break; sleep 0.2; done
  curl -sf "$u/healthz" >/dev/null || fail "$u did not start"
done

call() { # METHOD URL [BODY]
  curl -sf -X "$1" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' ${3:+--data "$3"} "$2"
}
seq=$(call GET "${api[0]}/v1/sequences" | jq -r '.data[] | select(.name == "Load") | .id')
call POST "${api[1]}/v1/sequences/$seq/activate" >/dev/null || fail "activate"

echo "replicas: creating $leads leads through two API replicas"
ids=()
for i in $(seq 1 "$leads"); do
  u=${api[$((i % 2))]}
  id=$(call POST "$u/v1/leads" "{\"name\":\"Lead $i\",\"linkedin_id\":\"lead-$i\",\"email_work\":\"lead$i@example.test\"}" | jq -r .data.id) || fail "lead $i"
  ids+=("\"$id\"")
done
half=$((leads / 2))
for part in "${ids[*]:0:$half}" "${ids[*]:$half}"; do
  list=$(echo "$part" | tr ' ' ',')
  call POST "${api[0]}/v1/enrollments" "{\"sequence_id\":\"$seq\",\"lead_ids\":[$list],\"confirm\":true}" >/dev/null || fail "enrol"
done

want=$((leads * 2))
echo "replicas: two workers run $want actions"
q() { psql -qtA "$dsn" -c "$1"; }
for _ in $(seq 1 90); do
  done_=$(q "SELECT count(*) FROM actions WHERE status IN ('sent','failed')")
  [ "$done_" -ge "$want" ] && break
  sleep 0.5
done
sent=$(q "SELECT count(*) FROM actions WHERE status = 'sent'")
echo "replicas: $done_ actions done ($sent sent)"
[ "$done_" -ge "$want" ] || fail "only $done_ of $want actions done in time"

twice=$(q "SELECT count(*) FROM (SELECT enrollment_id, step_id FROM actions WHERE status = 'sent' GROUP BY 1, 2 HAVING count(*) > 1) t")
keys=$(q "SELECT count(*) FROM (SELECT idem_key FROM actions GROUP BY 1 HAVING count(*) > 1) t")
[ "$twice" = 0 ] || fail "$twice enrollment steps were sent more than once"
[ "$keys" = 0 ] || fail "$keys idempotency keys were used twice"

# What each worker ran, as its own metrics say (claims go to whichever worker
# asks first, so one may have run all of it; none may have run any twice).
for m in "${metrics[@]}"; do
  body=$(curl -sf "$m") || fail "worker $m does not answer (stopped?)"
  n=$(printf '%s\n' "$body" | awk '/^leadline_runner_steps_total\{/ {s += $2} END {print s + 0}')
  echo "replicas: worker $m ran $n steps"
done
echo "replicas: ok: 2 API and 2 worker replicas, $leads leads, $done_ actions, none ran twice"
