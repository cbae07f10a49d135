#!/usr/bin/env bash
# test-interop-reshape.sh with a RAID5 of 4 restriped into a RAID6 of 5.
RESHAPE_GROW="--level 6 --layout left-symmetric" exec "$(dirname "$0")/test-interop-reshape.sh"
