#!/usr/bin/env bash
# TLS for clients: an array served with --tls=require, by PSK on a Unix
# socket and by X.509 certificates on loopback TCP (the client's
# certificate checked too), is read and written by nbdinfo, nbdcopy,
# nbdsh and qemu-img with the data verified; plaintext clients, a wrong
# PSK, an unknown user, a server certificate from another CA and a
# client without a certificate are refused.  Then TLS end to end: TLS
# members (nbds+unix://) behind a TLS-serving array.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdinfo
requires nbdcopy
requires nbdsh
requires qemu-img
requires psktool
requires certtool
nbdkit --dump-config | grep -q '^tls=yes' || skip "nbdkit built without TLS"

# refused WHAT REGEX CMD...: CMD must fail saying why (matching REGEX).
refused () {
  local what=$1 why=$2
  shift 2
  if "$@" > "$T/refused" 2>&1; then
    die "$what was served: $(cat "$T/refused")"
  fi
  grep -Eq "$why" "$T/refused" ||
    die "$what refused, but not for '$why': $(cat "$T/refused")"
  echo "ok: $what refused: $(head -1 "$T/refused")"
}

# A loopback TCP port nobody listens on (for the X.509 server).
free_port () {
  /usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_tcp_server CONFIG: like start_server, on 127.0.0.1:$port.
start_tcp_server () {
  port=$(free_port)
  rm -f "$T/nbdkit.pid"
  nbdkit -f -i 127.0.0.1 -p "$port" -P "$T/nbdkit.pid" \
    ${nbdkit_opts[@]+"${nbdkit_opts[@]}"} "$PLUGIN" "$1" 2>> "$T/nbdkit.log" &
  server_pid=$!
  cleanup_fn "stop_server"
  wait_for 10 _started_or_gone
  if ! kill -0 "$server_pid" 2>/dev/null || ! [ -s "$T/nbdkit.pid" ]; then
    die "nbdkit did not start: $(cat "$T/nbdkit.log")"
  fi
}

# check_roundtrip URI: nbdcopy random data in and out through URI.
check_roundtrip () {
  random_file "$T/data" "$(nbdinfo --size "$1")"
  nbdcopy --flush "$T/data" "$1"
  nbdcopy "$1" "$T/out"
  cmp "$T/data" "$T/out" || die "nbdcopy over TLS: data differs"
  echo "ok: nbdcopy writes and reads back over TLS"
}

# check_nbdsh URI: TLS negotiated; a write at an odd offset reads back.
check_nbdsh () {
  TLS_URI=$1 nbdsh -c '
import os
h.set_uri_allow_local_file(True)    # the URI names a key or cert dir
h.connect_uri(os.environ["TLS_URI"])
assert h.get_tls_negotiated()
buf = os.urandom(100000)
h.pwrite(buf, 12345)
assert h.pread(len(buf), 12345) == buf
'
  echo "ok: nbdsh negotiated TLS and reads back its write"
}

# check_qemu OBJECT NBD-OPTS: qemu-img writes a file in and copies the
# export out, both over TLS; nbdcopy confirms what it wrote.
check_qemu () {
  local obj=$1 server=$2
  random_file "$T/qdata" "$(stat -c %s "$T/data")"
  qemu-img convert --object "$obj" -n -f raw "$T/qdata" \
    --target-image-opts "driver=nbd,$server,tls-creds=tls0"
  nbdcopy "$tls" "$T/out"
  cmp "$T/qdata" "$T/out" || die "qemu-img's write over TLS differs"
  rm -f "$T/out"
  qemu-img convert --object "$obj" --image-opts "driver=nbd,$server,tls-creds=tls0" \
    -O raw "$T/out"
  cmp "$T/qdata" "$T/out" || die "qemu-img's read over TLS differs"
  echo "ok: qemu-img writes and reads over TLS"
}

new_array a 6 left-symmetric 64K 4 8M --assume-clean

# ---- PSK on a Unix socket
mkdir "$T/psk" "$T/wrong" "$T/bob"
psktool -u alice -p "$T/psk/keys.psk" > /dev/null
psktool -u alice -p "$T/wrong/keys.psk" > /dev/null   # another key
psktool -u bob -p "$T/bob/keys.psk" > /dev/null
nbdkit_opts=(--tls=require --tls-psk="$T/psk/keys.psk")
start_server "$conf"
tls="nbds+unix://alice@/?socket=$sock&tls-psk-file=$T/psk/keys.psk"
grep -q "protocol: .* with TLS" <<< "$(nbdinfo "$tls")" || die "nbdinfo: no TLS"
echo "ok: nbdinfo over PSK TLS"
check_roundtrip "$tls"
check_nbdsh "$tls"
check_qemu "tls-creds-psk,id=tls0,endpoint=client,dir=$T/psk,username=alice" \
  "server.type=unix,server.path=$sock"

# nbdkit answers NBD_REP_ERR_TLS_REQD; libnbd 1.14 shows it as ENOTSUP.
handshake="gnutls_handshake|TLS handshake failed"
refused "plaintext nbdinfo" "without TLS" nbdinfo "$uri"
refused "plaintext qemu-img" "TLS negotiation required" qemu-img info \
  --image-opts "driver=nbd,server.type=unix,server.path=$sock"
refused "a wrong PSK" "$handshake" nbdinfo \
  "nbds+unix://alice@/?socket=$sock&tls-psk-file=$T/wrong/keys.psk"
refused "an unknown PSK user" "$handshake" nbdinfo \
  "nbds+unix://bob@/?socket=$sock&tls-psk-file=$T/bob/keys.psk"
refused "a wrong PSK in qemu-img" "$handshake" qemu-img info \
  --object "tls-creds-psk,id=tls0,endpoint=client,dir=$T/wrong,username=alice" \
  --image-opts "driver=nbd,server.type=unix,server.path=$sock,tls-creds=tls0"
stop_server

# ---- X.509 on loopback TCP: a CA, the server's certificate for
# localhost, a client certificate; and a second CA nobody trusts.
pki () {
  local dir=$1 name=$2 ca=$3 tmpl=$4
  certtool --generate-privkey --key-type=ecdsa \
    --outfile "$dir/$name-key.pem" 2> /dev/null
  printf '%b' "$tmpl" > "$T/$name.info"
  if [ "$ca" = self ]; then
    certtool --generate-self-signed --load-privkey "$dir/$name-key.pem" \
      --template "$T/$name.info" --outfile "$dir/$name-cert.pem" 2> /dev/null
  else
    certtool --generate-certificate --load-privkey "$dir/$name-key.pem" \
      --load-ca-certificate "$ca/ca-cert.pem" --load-ca-privkey "$ca/ca-key.pem" \
      --template "$T/$name.info" --outfile "$dir/$name-cert.pem" 2> /dev/null
  fi
}
mkdir "$T/ca" "$T/ca2" "$T/srv" "$T/cli" "$T/cli-nocert" "$T/cli-ca2"
pki "$T/ca" ca self 'cn = nbdraid test CA\nca\ncert_signing_key\nexpiration_days = 2\n'
pki "$T/ca2" ca self 'cn = another CA\nca\ncert_signing_key\nexpiration_days = 2\n'
pki "$T/srv" server "$T/ca" 'cn = localhost\ndns_name = localhost\nip_address = 127.0.0.1\ntls_www_server\nsigning_key\nexpiration_days = 2\n'
pki "$T/cli" client "$T/ca" 'cn = nbdraid test client\ntls_www_client\nsigning_key\nexpiration_days = 2\n'
cp "$T/ca/ca-cert.pem" "$T/srv/"
cp "$T/ca/ca-cert.pem" "$T/cli/"
cp "$T/ca/ca-cert.pem" "$T/cli-nocert/"
cp "$T/ca2/ca-cert.pem" "$T/cli-ca2/"
chmod 600 "$T"/*/*-key.pem

nbdkit_opts=(--tls=require --tls-certificates="$T/srv" --tls-verify-peer)
start_tcp_server "$conf"
tls="nbds://localhost:$port/?tls-certificates=$T/cli"
grep -q "protocol: .* with TLS" <<< "$(nbdinfo "$tls")" || die "nbdinfo: no TLS"
echo "ok: nbdinfo over X.509 TLS to localhost:$port"
check_roundtrip "$tls"
check_nbdsh "$tls"
check_qemu "tls-creds-x509,id=tls0,endpoint=client,dir=$T/cli" \
  "server.type=inet,server.host=localhost,server.port=$port"

refused "plaintext nbdinfo over TCP" "without TLS" nbdinfo "nbd://localhost:$port/"
refused "a server certificate from an untrusted CA" "certificate verification" nbdinfo \
  "nbds://localhost:$port/?tls-certificates=$T/cli-ca2"
refused "a client without a certificate" "gnutls_" nbdinfo \
  "nbds://localhost:$port/?tls-certificates=$T/cli-nocert"
refused "a client without a certificate in qemu-img" "TLS" qemu-img info \
  --object "tls-creds-x509,id=tls0,endpoint=client,dir=$T/cli-nocert" \
  --image-opts "driver=nbd,server.type=inet,server.host=localhost,server.port=$port,tls-creds=tls0"
stop_server

# ---- TLS end to end: members served over TLS (two by PSK, one by X.509
# with the array's client certificate checked), the array served to its
# client over X.509 TLS; the members hold md's layout of the data.
make_members "$T/m" 3 8M
for i in 0 1; do
  start_member "m$i" "$T/m/d$i.img" --tls=require --tls-psk="$T/psk/keys.psk"
  m[i]="nbds+unix://alice@/?socket=$T/m$i.sock&tls-psk-file=$T/psk/keys.psk"
done
start_member m2 "$T/m/d2.img" --tls=require --tls-certificates="$T/srv" \
  --tls-verify-peer
m[2]="nbds+unix:///?socket=$T/m2.sock&tls-certificates=$T/cli"
write_config "$T/m/e.conf" 5 left-symmetric 64K "${m[@]}"
"$NBDRAID" create --assume-clean "$T/m/e.conf" 2>> "$T/create.log" ||
  die "nbdraid create over TLS members: $(cat "$T/create.log")"
conf=$T/m/e.conf
start_tcp_server "$conf"
tls="nbds://localhost:$port/?tls-certificates=$T/cli"
check_roundtrip "$tls"
status_is 'j["working"] == 3 and not j["failed"]' ||
  die "a TLS member failed: $(status_json 2>&1)"
refused "plaintext to the end-to-end array" "without TLS" nbdinfo \
  "nbd://localhost:$port/"
stop_server
members="$T/m/d0.img $T/m/d1.img $T/m/d2.img"
check_members_hold "$T/data"
echo "ok: TLS end to end: members over PSK and X.509, client over X.509"
