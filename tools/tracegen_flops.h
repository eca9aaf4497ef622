/* tracegen_flops.h: hta-tracegen's op performance layout
 * (tracegen_flops.c), entered when the arguments hold --flops-truth. */
#ifndef TRACEGEN_FLOPS_H
#define TRACEGEN_FLOPS_H

int tracegen_flops_main(int argc, char **argv);

#endif
