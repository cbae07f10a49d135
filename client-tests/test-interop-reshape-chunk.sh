#!/usr/bin/env bash
# test-interop-reshape.sh with a RAID5's chunk going from 64K to 128K.
RESHAPE_GROW="--chunk 128K" exec "$(dirname "$0")/test-interop-reshape.sh"
