import Foundation
import Ranging

/// How a player's distance was reached, as the `ranging` key of player events says it.
public enum RangingMethod: String, Sendable {
    /// Our reading of the player alone.
    case oneWay = "one-way"
    /// Our reading combined with the player's own reading of us.
    case twoWay = "two-way"
}

/// Two-way ranging in the agent: what each peer last reported reading of us (through the lobby's
/// `peerReading` events), combined with our own reading of that peer by ``TwoWayRanging``.
/// Without a reading from the peer, or with one older than ``maximumAge``, the distance is
/// one-way (the ranging pipeline's own).
///
/// Both are corrected with the radio offsets the lobby solved from the crowd, where it has them:
/// ours (``own``) and each peer's (from its profile). The correction applies to what is shown,
/// never to the readings reported to the lobby (see ``RadioOffsets``).
struct PeerReadings: Sendable {
    typealias Method = RangingMethod

    /// A player's distance, its interval and how they were reached.
    struct Estimate: Sendable, Equatable {
        var distance: Double?
        var interval: ClosedRange<Double>?
        var method: Method
    }

    /// Seconds a peer's reading stays usable: peers report every `encounter_report_seconds`, so a
    /// few missed reports (a lobby away, a busy outbox) must not drop us to one-way at once.
    var maximumAge: Double
    var model: DistanceModel = .default
    var uncertainty = RangingUncertainty()
    /// This device's offsets, as the lobby last published them.
    var own: RadioOffsets?
    private var readings: [String: (direction: TwoWayRanging.Direction, at: Date)] = [:]
    /// Each peer's offsets, from the profile its identity resolved to.
    private var offsets: [String: RadioOffsets] = [:]

    init(maximumAge: Double) {
        self.maximumAge = maximumAge
    }

    /// Remembers what `username` read of us at `time`.
    mutating func receive(from username: String, _ direction: TwoWayRanging.Direction, at time: Date) {
        if let known = readings[username], known.at > time { return }
        readings[username] = (direction, time)
    }

    mutating func forget(_ username: String) {
        readings[username] = nil
        offsets[username] = nil
    }

    /// Remembers `username`'s radio offsets (nil: the lobby has none for them).
    mutating func setOffsets(_ peerOffsets: RadioOffsets?, for username: String) {
        offsets[username] = peerOffsets.flatMap { $0.isUsable ? $0 : nil }
    }

    func offsets(of username: String) -> RadioOffsets? { offsets[username] }

    /// `username`'s reading of us if it is recent enough at `now`.
    func reading(from username: String, now: Date) -> TwoWayRanging.Direction? {
        guard let known = readings[username], now.timeIntervalSince(known.at) <= maximumAge else { return nil }
        return known.direction
    }

    /// The distance to `username` from our reading of them (`forward`), two-way when they reported
    /// theirs recently; otherwise the pipeline's one-way `distance` and `interval`. Either is
    /// corrected with the offsets known for both ends.
    func estimate(for username: String?, forward: TwoWayRanging.Direction?, oneWay distance: Double?,
                  interval: ClosedRange<Double>?, now: Date) -> Estimate {
        let peer = username.flatMap { offsets[$0] }
        if let username, let forward, let reverse = reading(from: username, now: now),
           let twoWay = TwoWayRanging.estimate(forward: forward.corrected(transmitter: peer, receiver: own),
                                               reverse: reverse.corrected(transmitter: own, receiver: peer),
                                               model: model, uncertainty: uncertainty) {
            return Estimate(distance: twoWay.distance, interval: twoWay.interval, method: .twoWay)
        }
        guard let distance, let forward, peer != nil || own != nil,
              let scale = Self.scale(forward, forward.corrected(transmitter: peer, receiver: own), model: model)
        else { return Estimate(distance: distance, interval: interval, method: .oneWay) }
        // The pipeline's own estimate (its filter and fitted interval), moved by as much as the
        // correction moves the model's distance: the same factor at every distance for the
        // log-distance model, so the interval keeps its shape.
        return Estimate(distance: distance * scale,
                        interval: interval.map { ($0.lowerBound * scale)...($0.upperBound * scale) }, method: .oneWay)
    }

    /// How much further (> 1) or nearer the model puts `corrected` than `reading`.
    private static func scale(_ reading: TwoWayRanging.Direction, _ corrected: TwoWayRanging.Direction, model: DistanceModel) -> Double? {
        guard let before = model.distance(rssi: reading.filteredRSSI, measuredPower: reading.measuredPower),
              let after = model.distance(rssi: corrected.filteredRSSI, measuredPower: corrected.measuredPower),
              before > 0, after.isFinite, after > 0 else { return nil }
        return after / before
    }
}
