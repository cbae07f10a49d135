#!/usr/bin/env bash
# md's write-back journal both ways, on RAID6 (test-interop-journal.sh
# with journal-mode = write-back, RAID6 of 4): nbdraid killed with
# writes in its cache alone, md recovers its data-only stripes; md
# switched to write-back (sysfs journal_mode) and cut off, nbdraid
# keeps and writes the data md logged without parity.  Each holds the
# other's data, and check finds no mismatch.
JOURNAL_MODE=write-back JOURNAL_LEVEL=6
. "$(dirname "$0")/test-interop-journal.sh"
