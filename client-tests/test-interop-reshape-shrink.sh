#!/usr/bin/env bash
# test-interop-reshape.sh with a 4-member RAID5 shrunk to three:
# md finishes the backwards reshape nbdraid left half-way.
RESHAPE_GROW="--raid-devices 3" exec "$(dirname "$0")/test-interop-reshape.sh"
