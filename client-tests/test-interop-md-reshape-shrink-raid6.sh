#!/usr/bin/env bash
# test-interop-md-reshape.sh with md shrinking a 5-member RAID6 to four.
RESHAPE_LEVEL=6 RESHAPE_SHRINK=1 exec "$(dirname "$0")/test-interop-md-reshape.sh"
