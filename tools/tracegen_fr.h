/* tracegen_fr.h: hta-tracegen --flight-recorder, the Flight Recorder dumps
 * of a hung job with its findings known (see tracegen_fr.c). */
#ifndef TRACEGEN_FR_H
#define TRACEGEN_FR_H

int tracegen_fr_main(int argc, char **argv);

#endif
