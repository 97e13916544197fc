#ifndef NEARPLAY_CALSA_SHIM_H
#define NEARPLAY_CALSA_SHIM_H
// alsa-lib's PCM API (pkg-config `alsa`, Debian package libasound2-dev).
#include <alsa/asoundlib.h>
#endif
