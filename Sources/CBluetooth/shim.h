#ifndef NEARPLAY_CBLUETOOTH_SHIM_H
#define NEARPLAY_CBLUETOOTH_SHIM_H
// libbluetooth (BlueZ's lib): raw HCI sockets, the HCI filter and device information.
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#endif
