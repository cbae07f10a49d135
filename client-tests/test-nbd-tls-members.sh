#!/usr/bin/env bash
# NBD members over TLS (nbds+unix:// with a PSK file): RAID1 round-trips
# through them; a member that requires TLS, asked for in plaintext, is
# refused with a line naming it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
nbdkit --dump-config | grep -q '^tls=yes' || skip "nbdkit built without TLS"

psk=$T/keys.psk
echo "alice:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$psk"
chmod 600 "$psk"
make_members "$T/m" 2 8M
for i in 0 1; do
  start_member "tls$i" "$T/m/d$i.img" --tls=require --tls-psk="$psk"
done
tls_uri () { echo "nbds+unix://alice@/?socket=$T/tls$1.sock&tls-psk-file=$psk"; }
write_config "$T/a.conf" 1 - - "$(tls_uri 0)" "$(tls_uri 1)"
"$NBDRAID" create "$T/a.conf" 2> "$T/create.log" || die "$(cat "$T/create.log")"
start_server "$T/a.conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data through TLS members differs"
stop_server
members="$T/m/d0.img $T/m/d1.img"
check_members_hold "$T/data"
echo "ok: RAID1 over TLS members"

write_config "$T/b.conf" 1 - - "nbd+unix:///?socket=$T/tls0.sock" "$(tls_uri 1)"
if out=$(nbdkit -U "$(new_socket)" "$PLUGIN" "$T/b.conf" --run true 2>&1); then
  die "a plaintext connection to a TLS member was accepted"
fi
grep -q "1 member is missing: nbd+unix:///?socket=$T/tls0.sock (.*TLS" <<< "$out" ||
  die "unclear refusal: $out"
echo "ok: plaintext to a TLS member refused: $(grep error: <<< "$out" | head -1)"
