#!/usr/bin/env bash
# test-interop-reshape.sh with a near-2 RAID10 of 4 members growing to 5.
RESHAPE_LEVEL=10 exec "$(dirname "$0")/test-interop-reshape.sh"
