#!/usr/bin/env bash
# test-interop-md-reshape.sh with a RAID0 md grows from 4 to 5 members.
RESHAPE_LEVEL=0 exec "$(dirname "$0")/test-interop-md-reshape.sh"
