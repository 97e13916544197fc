/// How one device's radio differs from a reference one, in dB, as the lobby solves it from the
/// two-way readings players report (``CrowdCalibration``): another device's reading of this one
/// is `transmit` dB stronger than the measured power this one advertises says, and this one's
/// readings are `receive` dB higher than a reference receiver's would be.
///
/// The offsets are relative to what a device reports: its readings as its own pipeline filtered
/// them, with any stored calibration offset already added. So they correct what is shown and are
/// never fed back into what is reported, or the solve would chase its own corrections.
public struct RadioOffsets: Sendable, Hashable, Codable {
    public var transmit: Double
    public var receive: Double
    /// Standard errors (dB): what the readings did not pin stays near the prior's 6 dB.
    public var transmitError: Double
    public var receiveError: Double

    public init(transmit: Double, receive: Double, transmitError: Double, receiveError: Double) {
        self.transmit = transmit
        self.receive = receive
        self.transmitError = transmitError
        self.receiveError = receiveError
    }

    /// Offsets a device can really have. The lobby publishes nothing outside this, so offsets
    /// outside it come from a lobby that misbehaves and are not used.
    public static let plausible = -30.0...30.0

    /// Whether both offsets and both errors are usable numbers.
    public var isUsable: Bool {
        Self.plausible.contains(transmit) && Self.plausible.contains(receive)
            && transmitError.isFinite && transmitError >= 0 && receiveError.isFinite && receiveError >= 0
    }
}

extension TwoWayRanging.Direction {
    /// This direction as a reference transmitter and receiver would have given it: the
    /// transmitter's offset added to the measured power it advertised, the receiver's taken off
    /// the reading. The filter's variance is unchanged: the offsets' errors are the same at every
    /// reading, which the fitted interval already allows for.
    public func corrected(transmitter: RadioOffsets?, receiver: RadioOffsets?) -> Self {
        var corrected = self
        if let transmitter, transmitter.isUsable { corrected.measuredPower += transmitter.transmit }
        if let receiver, receiver.isUsable { corrected.filteredRSSI -= receiver.receive }
        return corrected
    }
}
