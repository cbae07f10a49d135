#!/usr/bin/env bash
# test-interop-reshape.sh with a RAID0 growing from 4 to 5 members.
RESHAPE_LEVEL=0 exec "$(dirname "$0")/test-interop-reshape.sh"
