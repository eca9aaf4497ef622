/* tracegen_groups.h: hta-tracegen's tensor x data parallel layout
 * (tracegen_groups.c), entered when the arguments hold --tp. */
#ifndef TRACEGEN_GROUPS_H
#define TRACEGEN_GROUPS_H

int tracegen_groups_main(int argc, char **argv);

#endif
