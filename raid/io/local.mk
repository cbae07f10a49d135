# raid/io: running member operations: the worker pool, batches of
# operations and their joining, scratch buffers, stripe and range locks.
noinst_LTLIBRARIES += %reldir%/libio.la
%canon_reldir%_libio_la_SOURCES = \
	%reldir%/io-batch.c %reldir%/io-batch.h \
	%reldir%/io-gather.c %reldir%/io-gather.h \
	%reldir%/iopool.c %reldir%/iopool.h \
	%reldir%/range-lock.c %reldir%/range-lock.h \
	%reldir%/read-ahead.c %reldir%/read-ahead.h \
	%reldir%/scratch.c %reldir%/scratch.h \
	%reldir%/stripe-lock.c %reldir%/stripe-lock.h
%canon_reldir%_libio_la_CPPFLAGS = $(IO_INCLUDES)
%canon_reldir%_libio_la_CFLAGS = $(ENGINE_CFLAGS)

check_PROGRAMS += %reldir%/test-io-gather %reldir%/test-iopool \
	%reldir%/test-range-lock %reldir%/test-read-ahead
%canon_reldir%_test_range_lock_CPPFLAGS = $(IO_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_range_lock_LDADD = raid/libraid.la
%canon_reldir%_test_read_ahead_CPPFLAGS = $(IO_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_read_ahead_LDADD = raid/libraid.la
%canon_reldir%_test_io_gather_CPPFLAGS = $(IO_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_io_gather_LDADD = raid/libraid.la
%canon_reldir%_test_iopool_CPPFLAGS = $(IO_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_iopool_LDADD = raid/libraid.la
