#!/usr/bin/env bash
# Re-checks the nginx + nchan facts in tests/nchan/FACTS.md with curl, on loopback,
# every request bounded by --max-time. Starts its own instances through
# scripts/nchan.sh (names check-mem, check-ra, check-rb) and stops them on exit.
#   bash tests/nchan/check.sh          # prints "ok"/"FAIL" per fact; exit 1 on any FAIL
# Avoids on purpose the resume patterns that crash nchan 1.3.6 workers (see FACTS.md).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NCHAN="$ROOT/scripts/nchan.sh"
FAILS=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
has() { grep -qF -- "$2" <<<"$1"; }
hdr() { tr -d '\r' <<<"$1" | sed -n "s/^$2: //Ip" | tail -1; }

cleanup() {
  for n in check-rb check-ra check-mem; do "$NCHAN" stop --name "$n" >/dev/null 2>&1; done
}
trap cleanup EXIT
cleanup

line=$("$NCHAN" start --name check-mem --timeout 2 --buffer 3 --ping 1 \
  --ping-event heartbeat --ping-data '{"hb":1}') || { echo "FAIL start"; exit 1; }
echo "$line"
B=${line##* }
ES=(-H 'Accept: text/event-stream')

pub() { curl -sS --max-time 2 -X POST "${@:2}" --data-binary "$1"; }

# --- EventSource --------------------------------------------------------------
out=$(pub '{"n":1}' -H 'Content-Type: application/json' "$B/pub/c1")
check "publish answers 202 + 'last message id: T:0'" has "$out" "last message id: "
id1=$(sed -n 's/^last message id: //p' <<<"$out")
pub '{"n":2}' -H 'X-EventSource-Event: price' "$B/pub/c1" >/dev/null
body=$(curl -sS -N --max-time 1 "${ES[@]}" "$B/sub/es/c1" 2>/dev/null)
check "ES starts with ': hi' then 'id: <unix>:<tag>' + data" \
  [ "${body:0:24}" == $': hi\n\nid: '"${id1%%:*}"$':0\nd' ]
check "ES sends 'event: price' before 'id:'" has "$body" $'event: price\nid: '
check "ES without 'Accept: text/event-stream' is 403" \
  [ "$(curl -sS --max-time 1 -o /dev/null -w '%{http_code}' "$B/sub/es/c1")" == 403 ]
body=$(curl -sS -N --max-time 1 "${ES[@]}" -H "Last-Event-ID: $id1" "$B/sub/es/c1" 2>/dev/null)
check "resume via Last-Event-ID skips the first" bash -c '[[ "$1" != *"{\"n\":1}"* && "$1" == *"{\"n\":2}"* ]]' _ "$body"
body=$(curl -sS -N --max-time 1 "${ES[@]}" "$B/sub/es/c1?last_event_id=$id1" 2>/dev/null)
check "resume via ?last_event_id= skips the first" bash -c '[[ "$1" != *"{\"n\":1}"* && "$1" == *"{\"n\":2}"* ]]' _ "$body"
for i in 3 4 5; do pub "m$i" "$B/pub/c1" >/dev/null; done
body=$(curl -sS -N --max-time 1 "${ES[@]}" -H "Last-Event-ID: $id1" "$B/sub/es/c1" 2>/dev/null)
check "evicted cursor silently restarts at the oldest kept message" \
  [ "$(grep -c '^data: ' <<<"$body")" == 3 ]
body=$(curl -sS -N --max-time 2.5 "${ES[@]}" "$B/sub/es/quiet" 2>/dev/null)
check "ping bytes ':hi' + 'event: heartbeat\\ndata: {\"hb\":1}\\n\\n'" \
  has "$body" $'event: heartbeat\ndata: {"hb":1}\n\n'

# --- long-poll ------------------------------------------------------------------
pub 'lp1' -H 'Content-Type: text/plain' "$B/pub/lp" >/dev/null
pub '{"lp":2}' -H 'Content-Type: application/json' "$B/pub/lp" >/dev/null
h=$(curl -sS --max-time 3 -D - -o /dev/null "$B/sub/lp/lp")
lm=$(hdr "$h" Last-Modified); et=$(hdr "$h" Etag)
check "LP: Content-Type of the publisher, Last-Modified + bare Etag" \
  bash -c '[[ "$1" == *"Content-Type: text/plain"* && -n "$2" && "$3" =~ ^[0-9]+$ ]]' _ "$h" "$lm" "$et"
h=$(curl -sS --max-time 3 -D - -H "If-Modified-Since: $lm" -H "If-None-Match: $et" "$B/sub/lp/lp")
check "LP: IMS + INM gives the next message" has "$h" '{"lp":2}'
lm=$(hdr "$h" Last-Modified); et=$(hdr "$h" Etag)
code=$(curl -sS --max-time 4 -o /dev/null -w '%{http_code}' -H "If-Modified-Since: $lm" -H "If-None-Match: $et" "$B/sub/lp/lp")
check "LP: hold past nchan_subscriber_timeout ends 408" [ "$code" == 408 ]
code=$(curl -sS --max-time 2 -o /dev/null -w '%{http_code}' -H "If-Modified-Since: $lm" -H "If-None-Match: $et" "$B/sub/poll/lp")
check "interval-poll at the tip answers 304" [ "$code" == 304 ]

# --- CORS -----------------------------------------------------------------------
O='Origin: http://app.example'
h=$(curl -sS --max-time 2 -D - -o /dev/null -H "$O" "$B/sub/lp/lp")
check "GET echoes Origin once (nchan's own header)" [ "$(grep -ci '^Access-Control-Allow-Origin: http://app.example' <<<"$h")" == 1 ]
check "GET exposes Etag, Retry-After, Date" has "$h" 'Access-Control-Expose-Headers: Etag, Last-Modified, Retry-After, Date'
h=$(curl -sS --max-time 2 -D - -o /dev/null -X OPTIONS -H "$O" -H 'Access-Control-Request-Method: GET' \
  -H 'Access-Control-Request-Headers: last-event-id' "$B/sub/es/c1")
check "preflight 204 allows Last-Event-ID" bash -c '[[ "$1" == "HTTP/1.1 204"* && "$1" == *"Last-Event-ID"* ]]' _ "$h"

# --- Redis: two instances share channels ---------------------------------------------
if lines=$("$NCHAN" start --name check-ra --redis --timeout 5); then
  echo "$lines"
  A=$(head -1 <<<"$lines"); A=${A##* }; rport=$(tail -1 <<<"$lines"); rport=${rport##*:}
  lines=$("$NCHAN" start --name check-rb --redis-port "$rport" --timeout 5)
  echo "$lines"
  Bb=$(head -1 <<<"$lines"); Bb=${Bb##* }
  curl -sS -N --max-time 2 "${ES[@]}" "$Bb/sub/es/shared" >/tmp/nchan-check-es.$$ 2>/dev/null &
  curl -sS --max-time 2 "$Bb/sub/lp/shared" >/tmp/nchan-check-lp.$$ 2>/dev/null &
  sleep 0.5
  pub 'via-A' "$A/pub/shared" >/dev/null
  wait
  check "Redis: publish on A reaches B's EventSource" has "$(cat /tmp/nchan-check-es.$$)" 'data: via-A'
  check "Redis: publish on A reaches B's long-poll" [ "$(cat /tmp/nchan-check-lp.$$)" == via-A ]
  rm -f /tmp/nchan-check-es.$$ /tmp/nchan-check-lp.$$
else
  bad "Redis instances start"
fi

echo "$FAILS failure(s)"
[ "$FAILS" == 0 ]
