# raid/format: pure, no I/O: little-endian helpers, the md superblock
# and bitmap encodings, the level table, the geometry of every level,
# parity (ISA-L), the config file, controller placement, NBD URI
# spellings.
noinst_LTLIBRARIES += %reldir%/libformat.la
%canon_reldir%_libformat_la_SOURCES = \
	%reldir%/bitmap-format.c %reldir%/bitmap-format.h \
	%reldir%/clock.h \
	%reldir%/config-file.c %reldir%/config-file.h \
	%reldir%/config-members.c %reldir%/config-parse.h \
	%reldir%/config-paths.c \
	%reldir%/config-rewrite.c \
	%reldir%/controllers.c %reldir%/controllers.h \
	%reldir%/geometry.c %reldir%/geometry.h \
	%reldir%/geometry-copies.c \
	%reldir%/geometry-parity.c \
	%reldir%/journal-format.c %reldir%/journal-format.h \
	%reldir%/le.h \
	%reldir%/level.c \
	%reldir%/member-set.h \
	%reldir%/member-spec.c \
	%reldir%/owner.c %reldir%/owner.h \
	%reldir%/parity.c %reldir%/parity.h \
	%reldir%/parity-locate.c \
	%reldir%/ppl-format.c %reldir%/ppl-format.h \
	%reldir%/superblock.c %reldir%/superblock.h \
	%reldir%/units.c \
	%reldir%/uri-same.c %reldir%/uri-same.h
%canon_reldir%_libformat_la_CPPFLAGS = $(FORMAT_INCLUDES)
%canon_reldir%_libformat_la_CFLAGS = $(ENGINE_CFLAGS) $(ISAL_CFLAGS) \
	$(INIH_CFLAGS)

check_PROGRAMS += \
	%reldir%/test-config \
	%reldir%/test-geometry \
	%reldir%/test-journal-format \
	%reldir%/test-level \
	%reldir%/test-owner \
	%reldir%/test-parity \
	%reldir%/test-ppl-format \
	%reldir%/test-superblock \
	%reldir%/test-uri-same
%canon_reldir%_test_config_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_config_LDADD = raid/libraid.la
%canon_reldir%_test_geometry_SOURCES = %reldir%/test-geometry.c \
	raid/test-lib/md-layout.c raid/test-lib/md-layout.h
%canon_reldir%_test_geometry_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_geometry_LDADD = raid/libraid.la
%canon_reldir%_test_journal_format_CPPFLAGS = $(FORMAT_INCLUDES) \
	$(TEST_INCLUDES)
%canon_reldir%_test_journal_format_LDADD = raid/libraid.la
%canon_reldir%_test_level_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_level_LDADD = raid/libraid.la
%canon_reldir%_test_owner_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_owner_LDADD = raid/libraid.la
%canon_reldir%_test_parity_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_parity_LDADD = raid/libraid.la
%canon_reldir%_test_ppl_format_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_ppl_format_LDADD = raid/libraid.la
%canon_reldir%_test_superblock_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_superblock_LDADD = raid/libraid.la
%canon_reldir%_test_uri_same_CPPFLAGS = $(FORMAT_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_uri_same_LDADD = raid/libraid.la
