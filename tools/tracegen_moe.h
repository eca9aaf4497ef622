/* tracegen_moe.h: hta-tracegen's expert-parallel layout
 * (tracegen_moe.c), entered when the arguments hold --moe. */
#ifndef TRACEGEN_MOE_H
#define TRACEGEN_MOE_H

int tracegen_moe_main(int argc, char **argv);

#endif
