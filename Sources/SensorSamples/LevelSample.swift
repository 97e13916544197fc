/// The sound level of one window of microphone audio (50 ms unless configured otherwise).
public struct LevelSample: Hashable, Codable, Sendable {
    /// Seconds from the start of the capture to the end of this window.
    public var time: Double
    /// RMS level in dBFS, where a full-scale square wave is 0 dBFS and a full-scale sine −3.01.
    /// Digital silence is reported as ``LevelMeter/silenceFloor``.
    public var rmsDBFS: Double
    /// Largest absolute sample in dBFS (0 is full scale).
    public var peakDBFS: Double
    /// Overruns (`-EPIPE`) recovered since the capture started; samples were lost at each one.
    public var overruns: Int

    public init(time: Double, rmsDBFS: Double, peakDBFS: Double, overruns: Int = 0) {
        self.time = time
        self.rmsDBFS = rmsDBFS
        self.peakDBFS = peakDBFS
        self.overruns = overruns
    }

    enum CodingKeys: String, CodingKey {
        case time = "t", rmsDBFS = "rms_dbfs", peakDBFS = "peak_dbfs", overruns
    }
}
