# raid/levels: each level family's request paths: copies (RAID0, RAID1,
# RAID10) and parity (RAID5, RAID6, with its stripe columns and write
# batches); the table of which family serves which level.
noinst_LTLIBRARIES += %reldir%/liblevels.la
%canon_reldir%_liblevels_la_SOURCES = \
	%reldir%/copies.h \
	%reldir%/io-copies.c \
	%reldir%/io-parity.c \
	%reldir%/levels.c %reldir%/levels.h \
	%reldir%/parity-segment.c %reldir%/parity-segment.h \
	%reldir%/parity-state.c \
	%reldir%/parity-write-back.c \
	%reldir%/read-latency.c %reldir%/read-latency.h \
	%reldir%/read-parity.c \
	%reldir%/rebuild-copies.c \
	%reldir%/rebuild-parity.c \
	%reldir%/scrub-copies.c \
	%reldir%/scrub-parity.c \
	%reldir%/stripe-batch.c %reldir%/stripe-batch.h \
	%reldir%/stripe-column.c %reldir%/stripe-column.h
%canon_reldir%_liblevels_la_CPPFLAGS = $(LEVELS_INCLUDES)
%canon_reldir%_liblevels_la_CFLAGS = $(ENGINE_CFLAGS)

check_PROGRAMS += \
	%reldir%/test-copy-runs \
	%reldir%/test-io \
	%reldir%/test-read-latency \
	%reldir%/test-rebuild \
	%reldir%/test-stripe-batch
%canon_reldir%_test_copy_runs_SOURCES = %reldir%/test-copy-runs.c \
	$(TEST_ARRAY)
%canon_reldir%_test_copy_runs_CPPFLAGS = $(LEVELS_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_copy_runs_LDADD = raid/libraid.la
%canon_reldir%_test_io_SOURCES = %reldir%/test-io.c $(TEST_ARRAY)
%canon_reldir%_test_io_CPPFLAGS = $(LEVELS_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_io_LDADD = raid/libraid.la
%canon_reldir%_test_read_latency_SOURCES = %reldir%/test-read-latency.c \
	$(TEST_ARRAY)
%canon_reldir%_test_read_latency_CPPFLAGS = $(LEVELS_INCLUDES) \
	$(TEST_INCLUDES)
%canon_reldir%_test_read_latency_LDADD = raid/libraid.la
%canon_reldir%_test_rebuild_SOURCES = %reldir%/test-rebuild.c $(TEST_ARRAY)
%canon_reldir%_test_rebuild_CPPFLAGS = $(LEVELS_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_rebuild_LDADD = raid/libraid.la
%canon_reldir%_test_stripe_batch_SOURCES = %reldir%/test-stripe-batch.c \
	$(TEST_ARRAY)
%canon_reldir%_test_stripe_batch_CPPFLAGS = $(LEVELS_INCLUDES) \
	$(TEST_INCLUDES)
%canon_reldir%_test_stripe_batch_LDADD = raid/libraid.la
