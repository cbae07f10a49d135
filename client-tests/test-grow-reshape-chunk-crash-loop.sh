#!/usr/bin/env bash
# test-grow-reshape-crash-loop.sh through a RAID5's chunk going from
# 64K to 128K: the same-size reshape's windows lie right behind the
# data they read, so it checkpoints every few stripes.
RESHAPE_GROW="--chunk 128K" exec "$(dirname "$0")/test-grow-reshape-crash-loop.sh"
