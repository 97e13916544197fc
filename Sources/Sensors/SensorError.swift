/// Why a sensor could not be found, opened or read.
///
/// Every case names the file, device or PCM involved, and its description is a sentence that says
/// what to do about it.
public enum SensorError: Error, Equatable, Sendable {
    /// No accelerometer (a device with `in_accel_x/y/z` channels) under the IIO root.
    case noAccelerometer(root: String)
    /// The named accelerometer does not exist under the IIO root.
    case accelerometerNotFound(name: String, root: String)
    /// A file exists but this user may not open it.
    case permissionDenied(path: String)
    /// A file the device should have is not there.
    case missingAttribute(path: String)
    /// A sysfs attribute or a scan element description could not be parsed.
    case malformedAttribute(path: String, text: String, reason: String)
    /// A system call on a file failed for another reason.
    case io(path: String, operation: String, errno: Int32)
    /// The device does not support what was asked of it (e.g. buffered capture without `scan_elements`).
    case unsupported(device: String, reason: String)
    /// A recording to play instead of a sensor (JSON Lines or raw audio) does not exist.
    case recordingMissing(path: String)
    /// A sample file (JSON Lines or raw audio) has a bad line or length.
    case malformedRecording(path: String, line: Int, reason: String)
    /// A raw audio file is not whole S16_LE samples.
    case malformedAudioFile(path: String, byteOffset: Int, reason: String)
    /// ALSA could not open the PCM because it does not exist.
    case audioDeviceMissing(pcm: String, message: String)
    /// ALSA could not open the PCM because another program holds it.
    case audioDeviceBusy(pcm: String)
    /// Another ALSA call failed; `function` is the alsa-lib function, `code` its negative errno.
    case audio(pcm: String, function: String, code: Int32, message: String)
}

/// Where the udev rules live, named in permission errors.
let udevRuleHint = "install udev/70-nearplay-sensors.rules and add yourself to the `nearplay` group (see hardware-notes.md)"

extension SensorError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noAccelerometer(let root):
            return "No accelerometer found under \(root): check `ls \(root)` and that the IIO driver is loaded, or pass --iio-root."
        case .accelerometerNotFound(let name, let root):
            return "No accelerometer named \(name) under \(root): run `nearplay sensors` to list the ones found."
        case .permissionDenied(let path):
            return "Permission denied opening \(path): \(udevRuleHint)."
        case .missingAttribute(let path):
            return "\(path) is missing: the driver does not expose it, or this is not an IIO device."
        case .malformedAttribute(let path, let text, let reason):
            return "\(path): cannot read \(text.debugDescription): \(reason)."
        case .io(let path, let operation, let code):
            return "\(operation) \(path) failed: \(errnoText(code)) (errno \(code))."
        case .unsupported(let device, let reason):
            return "\(device) cannot do that: \(reason)."
        case .recordingMissing(let path):
            return "There is no recording at \(path): give the path of a file written by `nearplay sensors --json` (accelerometer) or `arecord -f S16_LE -r 16000 -c 1 -t raw` (audio)."
        case .malformedRecording(let path, let line, let reason):
            return "\(path):\(line): \(reason)."
        case .malformedAudioFile(let path, let byteOffset, let reason):
            return "\(path) at byte \(byteOffset): \(reason); raw audio must be headerless S16_LE mono."
        case .audioDeviceMissing(let pcm, let message):
            return "ALSA PCM \(pcm.debugDescription) cannot be opened (\(message)): list capture devices with `arecord -L` and pass one with --pcm."
        case .audioDeviceBusy(let pcm):
            return "ALSA PCM \(pcm.debugDescription) is busy: another program is recording from it; close it (see `fuser -v /dev/snd/*`) or pick another with --pcm."
        case .audio(let pcm, let function, let code, let message):
            return "ALSA \(function) on \(pcm.debugDescription) failed: \(message) (\(code))."
        }
    }
}
