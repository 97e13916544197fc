// The sample and calibration values live in the pure `SensorSamples` target, so that the games
// (and the lobby, which verifies rounds with them) need no ALSA or IIO code; code that reads the
// sensors gets them with `import Sensors`, as before.
@_exported import SensorSamples
