# nbdraid client tests: hosts on a private network, as network
# namespaces.  Source after lib.sh:
#   . "$abs_top_srcdir/client-tests/lib/netns.sh"
#   netns_hosts 4          # host0..host3 on 10.77.0.1..4, via a bridge
#   on_host 2 CMD...       # run CMD in host 2
#   link_down 2; link_up 2 # pull and put back host 2's cable
# Everything lives in namespaces this test creates; all of it, and the
# processes started in them, goes away on exit.  Needs root and
# iproute2; skips (77) otherwise.

requires_root
requires ip
ip netns add "nbdraid-probe-$$" 2>/dev/null || skip "network namespaces unavailable"
ip netns del "nbdraid-probe-$$"

NETNS_TAG=nr$$
netns_switch=$NETNS_TAG-sw
netns_count=0

netns_name () { echo "$NETNS_TAG-h$1"; }
host_ip () { echo "10.77.0.$(($1 + 1))"; }

_netns_teardown () {
  local i
  for ((i = 0; i < netns_count; i++)); do
    ip netns pids "$(netns_name "$i")" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$(netns_name "$i")" 2>/dev/null
  done
  ip netns del "$netns_switch" 2>/dev/null
}

# netns_hosts N: host0..hostN-1 joined by a bridge in a switch namespace
netns_hosts () {
  local i ns
  cleanup_fn _netns_teardown
  ip netns add "$netns_switch"
  ip -n "$netns_switch" link add br0 type bridge
  ip -n "$netns_switch" link set br0 up
  for ((i = 0; i < $1; i++)); do
    ns=$(netns_name "$i")
    ip netns add "$ns"
    netns_count=$((i + 1))
    ip link add "nrv$$-$i" type veth peer name eth0 netns "$ns"
    ip link set "nrv$$-$i" netns "$netns_switch"
    ip -n "$netns_switch" link set "nrv$$-$i" master br0 up
    ip -n "$ns" addr add "$(host_ip "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}

on_host () {
  local h=$1
  shift
  ip netns exec "$(netns_name "$h")" "$@"
}

link_down () { ip -n "$netns_switch" link set "nrv$$-$1" down; }
link_up () { ip -n "$netns_switch" link set "nrv$$-$1" up; }

# serve_on_host NAME HOST FILE [start_member args]: FILE served by
# nbdkit's file plugin (as start_member NAME does, on a UNIX socket) and
# reachable at the host's address (port 10809, 10810, ... for each disk
# of the host) through a forwarder that lives in the host: killing and
# restarting NAME's server is the host's disk server rebooting; the
# address stays.  Sets member_uri.
declare -A forwarders=() ports=() host_disks=()
serve_on_host () {
  local name=$1 host=$2 file=$3
  shift 3
  start_member "$name" "$file" "$@"
  if [ -z "${forwarders[$name]:-}" ]; then
    ports[$name]=$((10809 + ${host_disks[$host]:-0}))
    host_disks[$host]=$((${host_disks[$host]:-0} + 1))
    # ip itself, not on_host: a function run in the background is a
    # subshell, and killing it would leave its child running.
    ip netns exec "$(netns_name "$host")" socat \
      "TCP-LISTEN:${ports[$name]},bind=$(host_ip "$host"),reuseaddr,fork" \
      "UNIX-CONNECT:$T/$name.sock" 2>> "$T/members.log" &
    forwarders[$name]=$!
    disown $!
    cleanup_fn "kill $! 2>/dev/null"
    wait_for 10 on_host "$host" sh -c \
      "ss -ltn | grep -q '$(host_ip "$host"):${ports[$name]} '" ||
      die "no forwarder for $name on host $host"
  fi
  member_uri="nbd://$(host_ip "$host"):${ports[$name]}/"
}

# serve_array_on_host HOST CONFIG [params]: the nbdraid server itself in
# a host namespace, on a UNIX socket the test (outside) can reach
serve_array_on_host () {
  local host=$1 conf_file=$2
  shift 2
  sock=$T/sock
  rm -f "$sock" "$T/nbdkit.pid"
  # ip itself, not on_host: server_pid is then nbdkit's (ip execs it),
  # which stop_server and crash_server signal; a backgrounded function
  # is a subshell whose kill left the server running, serving on and
  # failing members the test took down later.
  ip netns exec "$(netns_name "$host")" nbdkit -f -U "$sock" \
    -P "$T/nbdkit.pid" "$PLUGIN" "$conf_file" "$@" 2>> "$T/nbdkit.log" &
  server_pid=$!
  cleanup_fn "stop_server"
  wait_for 30 _started_or_gone
  kill -0 "$server_pid" 2>/dev/null && [ -s "$T/nbdkit.pid" ] ||
    { cat "$T/nbdkit.log" >&2; die "nbdkit did not start in host $host"; }
  uri="nbd+unix:///?socket=$sock"
}
