# raid/assemble: arrays from a config: assembly from the members'
# superblocks (moved ones found by scan =), nbdraid create, and
# examining an assembled array as the member of another.  On top: it
# wires the layers together (each array's level family, the shared
# spares).
noinst_LTLIBRARIES += %reldir%/libassemble.la
%canon_reldir%_libassemble_la_SOURCES = \
	%reldir%/assemble.c \
	%reldir%/candidates.c %reldir%/candidates.h \
	%reldir%/consistency.c %reldir%/consistency.h \
	%reldir%/create.c \
	%reldir%/place.c %reldir%/place.h \
	%reldir%/scan.c \
	%reldir%/examine-array.c
%canon_reldir%_libassemble_la_CPPFLAGS = $(ASSEMBLE_INCLUDES)
%canon_reldir%_libassemble_la_CFLAGS = $(ENGINE_CFLAGS)
