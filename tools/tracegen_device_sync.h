/* tracegen_device_sync.h: hta-tracegen's device-synchronize layout with
 * its ground truth (tracegen_device_sync.c), entered when the arguments
 * hold --device-sync-truth. */
#ifndef TRACEGEN_DEVICE_SYNC_H
#define TRACEGEN_DEVICE_SYNC_H

int tracegen_device_sync_main(int argc, char **argv);

#endif
