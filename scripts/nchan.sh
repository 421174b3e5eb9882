#!/usr/bin/env bash
# Run nginx + nchan (and optionally Redis) on loopback for tidings interop tests.
#
#   scripts/nchan.sh start [--name X] [--port N] [--redis | --redis-port N]
#                          [--timeout S] [--ping S] [--ping-data STR] [--ping-event STR]
#                          [--ping-comment STR] [--buffer N] [--message-timeout T]
#                          [--first-message oldest|newest|N] [--es-timeout S]
#   scripts/nchan.sh stop    [--name X]
#   scripts/nchan.sh restart [--name X]   # stop, then start again with the same port/options
#   scripts/nchan.sh status  [--name X]   # prints the listening line(s); exit 1 when down
#   scripts/nchan.sh ensure-packages
#
# start renders tests/nchan/nginx.conf.template into $NCHAN_RUN_ROOT/<name>/
# (default target/nchan/<name>/), picks a free loopback port unless --port is given,
# starts nginx (daemonized, pid file in the run dir), waits until it answers and prints
#   nchan <name> listening on http://127.0.0.1:PORT
#   redis on 127.0.0.1:N                              (Redis mode only)
# Endpoints: POST /pub/<ch>, GET /sub/es/<ch>, /sub/lp/<ch>, /sub/poll/<ch>, /healthz.
#
# Redis mode: --redis starts a private redis-server on a free port; --redis-port N
# uses the Redis already answering on N (e.g. another instance's: the two then share
# channels) or starts one there. A Redis is stopped only by the instance that started it.
#
# Defaults: --timeout 30 (long-poll hold, seconds; 0 = forever), --ping 0 (off),
# --ping-event ping, --ping-data "", --ping-comment "", --buffer 100 (messages per
# channel), --message-timeout 10m, --first-message oldest, --es-timeout 0.
# Everything it writes stays in the run dir; stop removes nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TEMPLATE="$ROOT/tests/nchan/nginx.conf.template"
RUN_ROOT=${NCHAN_RUN_ROOT:-$ROOT/target/nchan}

die() { echo "nchan.sh: $*" >&2; exit 1; }
log() { echo "nchan.sh: $*" >&2; }

find_nchan_module() {
  local d
  for d in /usr/lib/nginx/modules /usr/share/nginx/modules; do
    if [[ -f $d/ngx_nchan_module.so ]]; then echo "$d/ngx_nchan_module.so"; return 0; fi
  done
  return 1
}

find_nginx() {
  command -v nginx 2>/dev/null || { [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; } || return 1
}

find_redis() {
  command -v redis-server 2>/dev/null || { [[ -x /usr/bin/redis-server ]] && echo /usr/bin/redis-server; } || return 1
}

# Install nginx-light, libnginx-mod-nchan, redis-server (and curl) only when missing;
# apt-get update only when an install is needed.
ensure_packages() {
  local missing=()
  find_nginx >/dev/null || missing+=(nginx-light)
  find_nchan_module >/dev/null || missing+=(libnginx-mod-nchan)
  find_redis >/dev/null || missing+=(redis-server)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  ((${#missing[@]} == 0)) && return 0
  log "installing ${missing[*]}"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to install ${missing[*]}"
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  find_nginx >/dev/null || die "nginx still missing after install"
  find_nchan_module >/dev/null || die "ngx_nchan_module.so still missing after install"
  find_redis >/dev/null || die "redis-server still missing after install"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

random_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  die "no free loopback port found"
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

read_pid() { [[ -f $1 ]] && tr -dc '0-9' <"$1" || true; }

redis_ping() {
  if command -v redis-cli >/dev/null 2>&1; then
    [[ $(timeout 2 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]
  else
    local reply
    reply=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1; printf 'PING\r\n' >&3; head -c 5 <&3" 2>/dev/null) || return 1
    [[ $reply == "+PONG" ]]
  fi
}

# nginx string escaping for a value put inside "..." (newlines are refused by nchan).
ngx_quote() {
  local v=$1
  [[ $v == *$'\n'* ]] && die "newlines are not allowed in nchan ping strings"
  v=${v//\\/\\\\}
  v=${v//\"/\\\"}
  printf '%s' "$v"
}

render() {
  local out=$1 line redis_prefix
  if [[ -n $REDIS_PORT ]]; then redis_prefix=""; else redis_prefix="#"; fi
  local module; module=$(find_nchan_module) || die "ngx_nchan_module.so not found"
  : >"$out.tmp"
  while IFS= read -r line || [[ -n $line ]]; do
    if [[ $line == @REDIS@* ]]; then line="$redis_prefix${line#@REDIS@}"; fi
    line=${line//@RUN_DIR@/$RUN}
    line=${line//@NCHAN_MODULE@/$module}
    line=${line//@NAME@/$NAME}
    line=${line//@PORT@/$PORT}
    line=${line//@REDIS_PORT@/${REDIS_PORT:-0}}
    line=${line//@TIMEOUT@/$TIMEOUT}
    line=${line//@ES_TIMEOUT@/$ES_TIMEOUT}
    line=${line//@PING_INTERVAL@/$PING}
    line=${line//@PING_EVENT@/$(ngx_quote "$PING_EVENT")}
    line=${line//@PING_DATA@/$(ngx_quote "$PING_DATA")}
    line=${line//@PING_COMMENT@/$(ngx_quote "$PING_COMMENT")}
    line=${line//@BUFFER_LENGTH@/$BUFFER}
    line=${line//@MESSAGE_TIMEOUT@/$MESSAGE_TIMEOUT}
    line=${line//@FIRST_MESSAGE@/$FIRST_MESSAGE}
    line=${line//@SHM_SIZE@/$SHM_SIZE}
    printf '%s\n' "$line" >>"$out.tmp"
  done <"$TEMPLATE"
  mv "$out.tmp" "$out"
}

save_options() {
  {
    printf 'NAME=%q\n' "$NAME"
    printf 'PORT=%q\n' "$PORT"
    printf 'REDIS_PORT=%q\n' "$REDIS_PORT"
    printf 'TIMEOUT=%q\n' "$TIMEOUT"
    printf 'ES_TIMEOUT=%q\n' "$ES_TIMEOUT"
    printf 'PING=%q\n' "$PING"
    printf 'PING_EVENT=%q\n' "$PING_EVENT"
    printf 'PING_DATA=%q\n' "$PING_DATA"
    printf 'PING_COMMENT=%q\n' "$PING_COMMENT"
    printf 'BUFFER=%q\n' "$BUFFER"
    printf 'MESSAGE_TIMEOUT=%q\n' "$MESSAGE_TIMEOUT"
    printf 'FIRST_MESSAGE=%q\n' "$FIRST_MESSAGE"
  } >"$RUN/options"
}

start_redis() {
  local owned_pid
  owned_pid=$(read_pid "$RUN/redis/redis.pid")
  if [[ -n $REDIS_PORT ]] && redis_ping "$REDIS_PORT"; then
    if pid_alive "$owned_pid"; then log "redis (ours) already up on $REDIS_PORT"; else log "using the Redis already on 127.0.0.1:$REDIS_PORT"; fi
    return 0
  fi
  [[ -n $REDIS_PORT ]] || REDIS_PORT=$(random_port)
  port_in_use "$REDIS_PORT" && die "port $REDIS_PORT is taken by something that is not Redis"
  mkdir -p "$RUN/redis"
  local redis; redis=$(find_redis) || die "redis-server not found"
  "$redis" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$RUN/redis" --daemonize yes --pidfile "$RUN/redis/redis.pid" \
    --logfile "$RUN/redis/redis.log" >/dev/null \
    || die "redis-server failed to start (see $RUN/redis/redis.log)"
  for _ in $(seq 1 100); do
    redis_ping "$REDIS_PORT" && return 0
    sleep 0.1
  done
  die "redis on $REDIS_PORT did not answer PING (see $RUN/redis/redis.log)"
}

wait_http() {
  local code
  for _ in $(seq 1 100); do
    if curl -fsS --max-time 1 -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null; then break; fi
    sleep 0.1
  done
  # The store must answer too (in Redis mode nchan connects after startup): channel
  # info of a never-published channel is 404 once the store is ready.
  for _ in $(seq 1 100); do
    code=$(curl -sS --max-time 1 -o /dev/null -w '%{http_code}' \
      "http://127.0.0.1:$PORT/pub/__nchan_sh_ready" 2>/dev/null || true)
    if [[ $code == 404 || $code == 200 ]]; then return 0; fi
    sleep 0.1
  done
  return 1
}

start_nginx() {
  local nginx; nginx=$(find_nginx) || die "nginx not found"
  local tries=1 fixed_port=$PORT
  [[ -n $fixed_port ]] || tries=10
  for _ in $(seq 1 "$tries"); do
    [[ -n $fixed_port ]] || PORT=$(random_port)
    render "$RUN/nginx.conf"
    : >"$RUN/logs/start.log"
    if "$nginx" -p "$RUN/" -c "$RUN/nginx.conf" -e "$RUN/logs/error.log" \
        >"$RUN/logs/start.log" 2>&1; then
      if wait_http; then return 0; fi
      cat "$RUN/logs/start.log" "$RUN/logs/error.log" >&2 2>/dev/null || true
      stop_nginx
      die "nginx started but http://127.0.0.1:$PORT/healthz never answered"
    fi
    if grep -q 'Address already in use' "$RUN/logs/start.log" && [[ -z $fixed_port ]]; then
      continue
    fi
    cat "$RUN/logs/start.log" >&2
    die "nginx failed to start (config: $RUN/nginx.conf)"
  done
  die "no free port after $tries tries"
}

stop_pidfile() {
  local what=$1 pidfile=$2 pid
  pid=$(read_pid "$pidfile")
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    pid_alive "$pid" || { log "stopped $what (pid $pid)"; return 0; }
    sleep 0.1
  done
  log "$what (pid $pid) ignored TERM for 10 s; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
}

stop_nginx() { stop_pidfile "nginx $NAME" "$RUN/nginx.pid"; }

print_lines() {
  echo "nchan $NAME listening on http://127.0.0.1:$PORT"
  if [[ -n $REDIS_PORT ]]; then echo "redis on 127.0.0.1:$REDIS_PORT"; fi
}

cmd_start() {
  ensure_packages
  local pid; pid=$(read_pid "$RUN/nginx.pid")
  if pid_alive "$pid"; then
    die "nchan $NAME is already running (pid $pid); use stop or restart"
  fi
  mkdir -p "$RUN/logs" "$RUN/tmp/body" "$RUN/tmp/proxy" "$RUN/tmp/fastcgi" \
    "$RUN/tmp/uwsgi" "$RUN/tmp/scgi"
  if [[ -n $PORT ]] && port_in_use "$PORT"; then die "port $PORT is already in use"; fi
  if [[ $WANT_REDIS == 1 ]]; then start_redis; fi
  start_nginx
  save_options
  echo "$PORT" >"$RUN/port"
  print_lines
}

load_options() {
  [[ -f $RUN/options ]] || die "no run dir for '$NAME' ($RUN/options missing)"
  # shellcheck disable=SC1091
  source "$RUN/options"
}

cmd_stop() {
  stop_nginx
  stop_pidfile "redis of $NAME" "$RUN/redis/redis.pid"
}

cmd_restart() {
  load_options
  stop_nginx
  WANT_REDIS=0
  if [[ -n $REDIS_PORT ]]; then WANT_REDIS=1; fi
  cmd_start
}

cmd_status() {
  load_options
  local pid; pid=$(read_pid "$RUN/nginx.pid")
  pid_alive "$pid" || { echo "nchan $NAME is not running"; return 1; }
  print_lines
}

# ---- arguments -------------------------------------------------------------
CMD=${1:-}
[[ -n $CMD ]] || die "usage: $0 start|stop|restart|status|ensure-packages [options]"
shift
NAME=default PORT="" REDIS_PORT="" WANT_REDIS=0 TIMEOUT=30 ES_TIMEOUT=0 PING=0
PING_EVENT=ping PING_DATA="" PING_COMMENT="" BUFFER=100 MESSAGE_TIMEOUT=10m
FIRST_MESSAGE=oldest SHM_SIZE=32M
while (($#)); do
  case $1 in
    --name) NAME=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --redis) WANT_REDIS=1; shift ;;
    --redis-port) REDIS_PORT=$2; WANT_REDIS=1; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --es-timeout) ES_TIMEOUT=$2; shift 2 ;;
    --ping) PING=$2; shift 2 ;;
    --ping-event) PING_EVENT=$2; shift 2 ;;
    --ping-data) PING_DATA=$2; shift 2 ;;
    --ping-comment) PING_COMMENT=$2; shift 2 ;;
    --buffer) BUFFER=$2; shift 2 ;;
    --message-timeout) MESSAGE_TIMEOUT=$2; shift 2 ;;
    --first-message) FIRST_MESSAGE=$2; shift 2 ;;
    *) die "unknown option: $1" ;;
  esac
done
[[ $NAME =~ ^[A-Za-z0-9._-]+$ ]] || die "bad --name: $NAME"
for v in PORT REDIS_PORT TIMEOUT ES_TIMEOUT PING BUFFER; do
  if [[ -n ${!v} && ! ${!v} =~ ^[0-9]+$ ]]; then f=${v,,}; die "--${f//_/-} must be a number"; fi
done
RUN="$RUN_ROOT/$NAME"

case $CMD in
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_restart ;;
  status) cmd_status ;;
  ensure-packages|ensure_packages) ensure_packages ;;
  *) die "unknown command: $CMD" ;;
esac
