#!/usr/bin/env bash
# nbdraid grow --layout right-asymmetric on a running 4-member RAID6 under fio
# (lib/reshape-under-fio.sh says what is checked).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
. "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"

reshape_under_fio 6 --layout right-asymmetric
