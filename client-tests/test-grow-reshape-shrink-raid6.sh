#!/usr/bin/env bash
# test-grow-reshape-shrink.sh with a RAID6 of 6 members giving up one,
# which fails half-way.
SHRINK_LEVEL=6 exec "$(dirname "$0")/test-grow-reshape-shrink.sh"
