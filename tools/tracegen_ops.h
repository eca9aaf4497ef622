/* tracegen_ops.h: hta-tracegen's ops / annotations / GPU gaps / memory
 * layout with its ground truth (tracegen_ops.c), entered when the
 * arguments hold --ops-truth. */
#ifndef TRACEGEN_OPS_H
#define TRACEGEN_OPS_H

int tracegen_ops_main(int argc, char **argv);

#endif
