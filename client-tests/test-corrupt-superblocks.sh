#!/usr/bin/env bash
# Crafted corrupt superblocks, one field each (the checksum recomputed
# unless the checksum is the fault), on one member of a RAID5: nbdkit
# raid refuses to start, naming the member and the field, and writes
# nothing to any member.  Corrupt bitmap headers: the bitmap is reported
# as not usable, by member and field, and not trusted.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires sha256sum

SBEDIT="/usr/bin/python3 $abs_top_srcdir/client-tests/sb-edit.py"
new_array c 5 left-symmetric 64K 3 8M --assume-clean
d=$T/c
mkdir "$d/pristine"
cp --sparse=always "$d"/d{0,1,2}.img "$d/pristine/"
read -r data_size size < <("$NBDRAID" examine --json "$d/d2.img" |
  /usr/bin/python3 -c 'import json,sys; j = json.load(sys.stdin)[0]
print(j["data_size_sectors"], j["size_sectors"])')

# field offset format value expected-message [--keep-csum]
cases=(
  "magic|0|I|0x12345678|no md superblock"
  "major_version|4|I|2|major_version 2 (only md v1.x is supported)"
  "sb_csum|216|I|0xdeadbeef|sb_csum 0xdeadbeef is wrong|--keep-csum"
  "feature_map unknown|8|I|0x80001|feature_map 0x80001: unknown feature bits 0x80000"
  "feature_map reshape|8|I|0x5|feature_map 0x5: a reshape in progress is not supported"
  "pad0|12|I|1|pad0 is 0x1, not zero"
  "pad3|240|I|1|pad3 is not zero"
  "max_dev|220|I|2000|max_dev 2000 exceeds 1920|--keep-csum"
  "dev_number|160|I|300|dev_number 300 is not below max_dev 128"
  "dev_roles|260|H|7|dev_roles[2] 0x7 is neither a role below 3 nor spare or faulty"
  "super_offset|144|Q|0|super_offset 0 is not 8"
  "data_offset|128|Q|12|data_offset 12 overlaps the superblock"
  "data_size|136|Q|$((data_size + 1000000))|member too small: data_offset 2048 + data_size $((data_size + 1000000)) sectors end past its 16384 sectors"
  "level|72|i|3|level 3, layout 2, raid_disks 3, chunksize 128, size $size: RAID level 3 is not supported"
  "layout|76|I|9|level 5, layout 9, raid_disks 3, chunksize 128, size $size: RAID5 layout 9 is not supported"
  "raid_disks|92|I|1|level 5, layout 2, raid_disks 1, chunksize 128, size $size: RAID5 left-symmetric needs 2 to 128 members, not 1"
  "chunksize|88|I|100|level 5, layout 2, raid_disks 3, chunksize 100, size $size: chunk 51200 must be a power of two from 4K to 1G"
  "size|80|Q|2097152|size 2097152 exceeds data_size $data_size"
  "bitmap_offset in the data|96|i|4096|bitmap_offset 4096 puts the bitmap in the data, which starts at data_offset 2048"
  "bitmap_offset before the superblock|96|i|-8|bitmap_offset -8 puts the bitmap inside or before the superblock"
)

restore () {
  cp --sparse=always "$d"/pristine/d{0,1,2}.img "$d/"
}

for c in "${cases[@]}"; do
  IFS='|' read -r field off fmt value expect flag <<< "$c"
  restore
  $SBEDIT "$d/d2.img" "$off" "$fmt" "$value" ${flag:+"$flag"}
  before=$(sha256sum "$d"/d{0,1,2}.img)
  if out=$(nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" --run true 2>&1); then
    die "$field: started with a corrupt superblock"
  fi
  grep -qF "$d/d2.img (bad md superblock: $expect" <<< "$out" ||
    grep -qF "$d/d2.img ($expect" <<< "$out" ||
    die "$field: expected '$expect', got: $out"
  [ "$before" = "$(sha256sum "$d"/d{0,1,2}.img)" ] ||
    die "$field: a member was written"
  echo "ok: $field: $(grep -o "d2.img (.*" <<< "$out" | cut -d';' -f1)"
done

# Bitmap headers (every member's: the bitmap is read from one), served
# read-only so nothing may be written.
bitmap_cases=(
  "bitmap magic|0|I|0x12345678|bitmap magic 0x12345678 is wrong"
  "bitmap version|4|I|9|bitmap version 9 is not supported"
  "bitmap chunksize|52|I|3000|bitmap chunksize 3000 is not a power of two of at least 512"
  "bitmap daemon_sleep|56|I|0|bitmap daemon_sleep 0 is out of range"
  "bitmap sync_size|40|Q|12345678901|bitmap sync_size 12345678901 sectors does not match the array's"
)
for c in "${bitmap_cases[@]}"; do
  IFS='|' read -r field off fmt value expect <<< "$c"
  restore
  for i in 0 1 2; do
    $SBEDIT "$d/d$i.img" "$off" "$fmt" "$value" --bitmap
  done
  before=$(sha256sum "$d"/d{0,1,2}.img)
  out=$(nbdkit -r -U "$(new_socket)" "$PLUGIN" "$conf" --run true 2>&1) ||
    die "$field: did not start read-only: $out"
  grep -qE "the bitmap on $d/d[012].img is not usable: $expect.*not trusting it" <<< "$out" ||
    die "$field: expected '$expect', got: $out"
  [ "$before" = "$(sha256sum "$d"/d{0,1,2}.img)" ] ||
    die "$field: a member was written"
  echo "ok: $field: $(grep -o 'not usable: [^;]*' <<< "$out")"
done
