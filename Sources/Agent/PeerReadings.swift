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
    private var readings: [String: (direction: TwoWayRanging.Direction, at: Date)] = [:]

    init(maximumAge: Double) {
        self.maximumAge = maximumAge
    }

    /// Remembers what `username` read of us at `time`.
    mutating func receive(from username: String, _ direction: TwoWayRanging.Direction, at time: Date) {
        if let known = readings[username], known.at > time { return }
        readings[username] = (direction, time)
    }

    mutating func forget(_ username: String) { readings[username] = nil }

    /// `username`'s reading of us if it is recent enough at `now`.
    func reading(from username: String, now: Date) -> TwoWayRanging.Direction? {
        guard let known = readings[username], now.timeIntervalSince(known.at) <= maximumAge else { return nil }
        return known.direction
    }

    /// The distance to `username` from our reading of them (`forward`), two-way when they reported
    /// theirs recently; otherwise the pipeline's one-way `distance` and `interval`.
    func estimate(for username: String?, forward: TwoWayRanging.Direction?, oneWay distance: Double?,
                  interval: ClosedRange<Double>?, now: Date) -> Estimate {
        if let username, let forward, let reverse = reading(from: username, now: now),
           let twoWay = TwoWayRanging.estimate(forward: forward, reverse: reverse, model: model, uncertainty: uncertainty) {
            return Estimate(distance: twoWay.distance, interval: twoWay.interval, method: .twoWay)
        }
        return Estimate(distance: distance, interval: interval, method: .oneWay)
    }
}
