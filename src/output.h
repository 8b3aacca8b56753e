/* output.h - the files a command writes: created close-on-exec before any
 * work, and closed with the first write error named.  Messages go
 * through msg.h. */
#ifndef MALLOCWATCH_OUTPUT_H
#define MALLOCWATCH_OUTPUT_H

#include <stdio.h>

/* Create path for writing, close-on-exec (a traced program must never
 * get it); "-" is stdout when dash_ok.  NULL after a message
 * "cannot create 'PATH': ERRNO". */
FILE *mw_output_create(const char *path, int dash_ok);

/* Flush f and close it (not stdout/stderr).  0, or -1 after a message
 * "cannot write 'PATH': ..." naming err when non-zero (the first error a
 * writer saw), else the flush's or the close's. */
int mw_output_close(FILE *f, const char *path, int err);

/* Write s (NULL: nothing) to out with XML's five special characters as
 * entities (&lt; &gt; &amp; &quot; &apos;), for JUnit XML and HTML text
 * and attribute values (XML 1.0 section 4.6; HTML5 knows &apos; too). */
void mw_xml_escape(FILE *out, const char *s);

#endif /* MALLOCWATCH_OUTPUT_H */
