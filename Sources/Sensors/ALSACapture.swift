import CALSA
import Glibc

/// An open ALSA capture PCM, S16_LE mono. Not thread-safe, like the `snd_pcm_t` it owns: create,
/// read and close it on one thread (``Microphone`` gives it a thread of its own).
///
/// Every alsa-lib call goes through ``check(_:_:)``, which turns a negative return code into a
/// ``SensorError`` naming the PCM and the function.
final class ALSACapture {
    let pcmName: String
    /// The rate the device agreed to; the preferred rate when it can do it.
    private(set) var sampleRate: Int = 0
    /// Frames per period, the size reads are made in.
    private(set) var periodFrames: Int = 0
    /// Overruns recovered so far.
    private(set) var overruns = 0
    private var handle: OpaquePointer?

    /// Opens `pcmName` for capture and negotiates S16_LE, one channel, and the rate nearest
    /// `preferredRate`. Opens non-blocking so that a busy device is an error at once rather
    /// than a wait, then switches to blocking reads.
    init(pcmName: String, preferredRate: Int, periodSeconds: Double) throws(SensorError) {
        self.pcmName = pcmName
        nearplay_alsa_silence_library_errors()
        var pcm: OpaquePointer?
        let opened = snd_pcm_open(&pcm, pcmName, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        if opened < 0 {
            let message = String(cString: snd_strerror(opened))
            switch -opened {
            case EBUSY, EAGAIN: throw .audioDeviceBusy(pcm: pcmName)
            case ENOENT, ENODEV, ENXIO, EINVAL: throw .audioDeviceMissing(pcm: pcmName, message: message)
            case EACCES, EPERM: throw .audio(pcm: pcmName, function: "snd_pcm_open", code: opened,
                                               message: message + "; add yourself to the `audio` group")
            default: throw .audio(pcm: pcmName, function: "snd_pcm_open", code: opened, message: message)
            }
        }
        handle = pcm
        do {
            try check(snd_pcm_nonblock(pcm, 0), "snd_pcm_nonblock")
            try configure(preferredRate: preferredRate, periodSeconds: periodSeconds)
            try check(snd_pcm_prepare(pcm), "snd_pcm_prepare")
            try check(snd_pcm_start(pcm), "snd_pcm_start")
        } catch {
            close()
            throw error
        }
    }

    private func configure(preferredRate: Int, periodSeconds: Double) throws(SensorError) {
        var params: OpaquePointer?
        try check(snd_pcm_hw_params_malloc(&params), "snd_pcm_hw_params_malloc")
        defer { snd_pcm_hw_params_free(params) }
        try check(snd_pcm_hw_params_any(handle, params), "snd_pcm_hw_params_any")
        try check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_set_access")
        try check(snd_pcm_hw_params_set_format(handle, params, SND_PCM_FORMAT_S16_LE), "snd_pcm_hw_params_set_format (S16_LE)")
        try check(snd_pcm_hw_params_set_channels(handle, params, 1), "snd_pcm_hw_params_set_channels (mono)")
        var rate = UInt32(preferredRate)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(handle, params, &rate, &direction), "snd_pcm_hw_params_set_rate_near")
        var period = snd_pcm_uframes_t(max(1, Double(rate) * periodSeconds))
        try check(snd_pcm_hw_params_set_period_size_near(handle, params, &period, &direction), "snd_pcm_hw_params_set_period_size_near")
        var buffer = period * 8
        try check(snd_pcm_hw_params_set_buffer_size_near(handle, params, &buffer), "snd_pcm_hw_params_set_buffer_size_near")
        try check(snd_pcm_hw_params(handle, params), "snd_pcm_hw_params")
        sampleRate = Int(rate)
        periodFrames = Int(period)
    }

    /// Reads up to `buffer.count` frames, waiting at most `timeoutMilliseconds` for the first
    /// ones. Returns the frames read, -1 when none came in time (so the owner can check whether
    /// to stop), or 0 when the PCM gives no more data. Recovers from overruns (counting them) and
    /// suspends.
    func read(into buffer: UnsafeMutableBufferPointer<Int16>, timeoutMilliseconds: Int32 = 200) throws(SensorError) -> Int {
        while true {
            let ready = snd_pcm_wait(handle, timeoutMilliseconds)
            if ready == 0 { return -1 }
            let result = ready < 0 ? snd_pcm_sframes_t(ready) : snd_pcm_readi(handle, buffer.baseAddress, snd_pcm_uframes_t(buffer.count))
            if result >= 0 { return Int(result) }
            let code = Int32(result)
            switch -code {
            case EPIPE:
                overruns += 1
                try check(snd_pcm_recover(handle, code, 1), "snd_pcm_recover (overrun)")
                try check(snd_pcm_start(handle), "snd_pcm_start")
            case ESTRPIPE:
                try check(snd_pcm_recover(handle, code, 1), "snd_pcm_recover (suspend)")
                if snd_pcm_state(handle) == SND_PCM_STATE_PREPARED {
                    try check(snd_pcm_start(handle), "snd_pcm_start")
                }
            case EAGAIN, EINTR:
                continue
            default:
                try check(code, ready < 0 ? "snd_pcm_wait" : "snd_pcm_readi")
            }
        }
    }

    func close() {
        guard let pcm = handle else { return }
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
        handle = nil
    }

    deinit { close() }

    @discardableResult
    private func check(_ code: Int32, _ function: String) throws(SensorError) -> Int32 {
        guard code < 0 else { return code }
        throw .audio(pcm: pcmName, function: function, code: code, message: String(cString: snd_strerror(code)))
    }
}
