#!/usr/bin/env bash
# test-interop-md-reshape.sh with md shrinking a 5-member RAID10 to four.
RESHAPE_LEVEL=10 RESHAPE_SHRINK=1 exec "$(dirname "$0")/test-interop-md-reshape.sh"
