#ifndef NEARPLAY_CALSA_SHIM_H
#define NEARPLAY_CALSA_SHIM_H
// alsa-lib's PCM API (pkg-config `alsa`, Debian package libasound2-dev).
#include <alsa/asoundlib.h>

// alsa-lib prints its own errors ("ALSA lib pcm.c:…") to stderr; Nearplay reports every failure
// itself, as a sentence, so it installs a handler that drops them. Swift cannot define the
// variadic handler, hence this C.
static void nearplay_alsa_quiet_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void nearplay_alsa_silence_library_errors(void) {
    snd_lib_error_set_handler(nearplay_alsa_quiet_handler);
}
#endif
