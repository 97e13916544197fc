#ifndef NEARPLAY_CDBUS_SHIM_H
#define NEARPLAY_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
