import Glibc

/// Turns 16-bit mono audio into ``LevelSample``s, one per window. Pure: no I/O, and time is the
/// number of frames seen divided by the sample rate.
public struct LevelMeter: Sendable {
    /// The level reported for digital silence, in dBFS (log of zero is not a number).
    public static let silenceFloor = -120.0

    public let sampleRate: Int
    /// Frames per window (50 ms at the sample rate unless configured otherwise).
    public let windowFrames: Int

    private var sumOfSquares: Int64 = 0
    private var peak: Int32 = 0
    private var framesInWindow = 0
    private var framesSeen: Int64 = 0

    /// Rates are held in 1…10 MHz and windows in 0…10 s (a window that is not a positive
    /// finite number is 50 ms), so no argument can trap.
    public init(sampleRate: Int, windowSeconds: Double = 0.05) {
        self.sampleRate = min(10_000_000, max(1, sampleRate))
        let window = windowSeconds > 0 && windowSeconds.isFinite ? min(10, windowSeconds) : 0.05
        self.windowFrames = max(1, Int((Double(self.sampleRate) * window).rounded()))
    }

    /// Frames lost to overruns so far, counted in the window times.
    private var framesLost: Int64 = 0
    private var overrunsSeen = 0

    /// Marks a gap in the audio (an overrun) of `lostFrames` frames (0 when unknown): the
    /// partial window is dropped, so no window mixes audio from before and after the gap, and
    /// later window times move on by the frames lost.
    public mutating func gap(lostFrames: Int = 0) {
        sumOfSquares = 0
        peak = 0
        framesSeen -= Int64(framesInWindow)
        framesLost += Int64(framesInWindow) + Int64(max(0, min(lostFrames, Int(Int32.max))))
        framesInWindow = 0
    }

    /// Adds samples; calls `emit` for every window they complete. An `overruns` count higher
    /// than the one last passed means audio was lost before these samples (see ``gap(lostFrames:)``).
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>, overruns: Int = 0, emit: (LevelSample) -> Void) {
        if overruns > overrunsSeen {
            overrunsSeen = overruns
            gap()
        }
        var index = 0
        let count = samples.count
        while index < count {
            let take = min(windowFrames - framesInWindow, count - index)
            var squares: Int64 = 0
            var windowPeak = peak
            for position in index..<(index + take) {
                let value = Int32(samples[position])
                squares &+= Int64(value * value)
                let magnitude = value < 0 ? -value : value
                if magnitude > windowPeak { windowPeak = magnitude }
            }
            sumOfSquares &+= squares
            peak = windowPeak
            framesInWindow += take
            framesSeen += Int64(take)
            index += take
            if framesInWindow == windowFrames {
                emit(currentLevel(overruns: overruns))
                sumOfSquares = 0
                peak = 0
                framesInWindow = 0
            }
        }
    }

    /// Convenience for arrays; returns the completed windows.
    public mutating func add(_ samples: [Int16], overruns: Int = 0) -> [LevelSample] {
        var levels: [LevelSample] = []
        samples.withUnsafeBufferPointer { buffer in
            add(buffer, overruns: overruns) { levels.append($0) }
        }
        return levels
    }

    private func currentLevel(overruns: Int) -> LevelSample {
        let meanSquare = Double(sumOfSquares) / Double(framesInWindow)
        return LevelSample(
            time: Double(framesSeen + framesLost) / Double(sampleRate),
            rmsDBFS: Self.decibels(amplitude: meanSquare.squareRoot() / 32768),
            peakDBFS: Self.decibels(amplitude: Double(peak) / 32768),
            overruns: overruns
        )
    }

    /// 20·log10(amplitude), never below ``silenceFloor``.
    public static func decibels(amplitude: Double) -> Double {
        guard amplitude > 0 else { return silenceFloor }
        return max(silenceFloor, 20 * log10(amplitude))
    }
}
