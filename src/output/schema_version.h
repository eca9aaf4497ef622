/* output/schema_version.h: the version of the results file's layout.
 *
 * A results file carries it as its schema_version attribute.  It goes up
 * by one whenever a round changes the file so that a reader of the
 * previous layout would misread it: a table or column removed or renamed,
 * a column's meaning or unit changed.  Added tables and columns go with a
 * version change too when they land in the same round as such a change.
 * Compatibility rule (docs/definitions.md, "Schema versions"): this
 * hta-mpi writes HTA_SCHEMA_VERSION and `hta-mpi diff` reads that version
 * and the one before it, HTA_SCHEMA_OLDEST_READ; anything else is refused
 * with its version named. */
#ifndef HTA_SCHEMA_VERSION_H
#define HTA_SCHEMA_VERSION_H

#define HTA_SCHEMA_VERSION 5
#define HTA_SCHEMA_OLDEST_READ (HTA_SCHEMA_VERSION - 1)

#endif
