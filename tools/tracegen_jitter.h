/* tracegen_jitter.h: hta-tracegen's step-time jitter layout with its
 * ground truth (tracegen_jitter.c), entered when the arguments hold
 * --jitter-data-loading-truth or --jitter-compute-truth. */
#ifndef TRACEGEN_JITTER_H
#define TRACEGEN_JITTER_H

int tracegen_jitter_main(int argc, char **argv);

#endif
