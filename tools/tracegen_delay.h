/* tracegen_delay.h: hta-tracegen's delay-cost layout with its ground
 * truth (tracegen_delay.c), entered when the arguments hold
 * --delay-truth. */
#ifndef TRACEGEN_DELAY_H
#define TRACEGEN_DELAY_H

int tracegen_delay_main(int argc, char **argv);

#endif
