/* tracegen_chains.h: hta-tracegen's critical-path layout with its ground
 * truth (tracegen_chains.c), entered when the arguments hold
 * --critical-path-truth. */
#ifndef TRACEGEN_CHAINS_H
#define TRACEGEN_CHAINS_H

int tracegen_chains_main(int argc, char **argv);

#endif
