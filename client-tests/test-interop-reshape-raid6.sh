#!/usr/bin/env bash
# test-interop-reshape.sh with a RAID6 growing from 4 to 5 members.
RESHAPE_LEVEL=6 exec "$(dirname "$0")/test-interop-reshape.sh"
