# server/control: the control plane of a running array, a library the
# plugin links: a libev loop serving the admin socket, events and
# background jobs.  It sees only the engine's public header.
noinst_LTLIBRARIES += %reldir%/libcontrol.la
%canon_reldir%_libcontrol_la_SOURCES = \
	%reldir%/checks.c %reldir%/checks.h \
	%reldir%/control.c %reldir%/control.h \
	%reldir%/control-commands.c \
	%reldir%/control-parse.c \
	%reldir%/control-status.c %reldir%/control-status.h \
	%reldir%/detail.c %reldir%/detail.h \
	%reldir%/prometheus.c %reldir%/prometheus.h \
	server/json/json.c server/json/json.h
%canon_reldir%_libcontrol_la_CPPFLAGS = -I$(srcdir)/raid/include \
	-I$(srcdir)/server/json
%canon_reldir%_libcontrol_la_CFLAGS = $(AM_CFLAGS) -fPIC
%canon_reldir%_libcontrol_la_LIBADD = raid/libraid.la $(EV_LIBS)
