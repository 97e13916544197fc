import BeaconFrames
import BeaconKeys
import Foundation

/// An iBeacon whose major and minor rotate every period (``RotatingIdentity``): the payloads a
/// player's agent or a location's beacon hands to ``Advertiser/advertise(rotating:)``.
public struct RotatingBeacon: Sendable {
    public enum Role: Sendable, Hashable { case player, location }

    /// The proximity UUID: the deployment's for players, its location UUID for locations.
    public var uuid: BeaconUUID
    public var secret: BeaconSecret
    public var period: RotationPeriod
    public var role: Role
    /// The RSSI expected 1 m away, in dBm, as advertised.
    public var measuredPower: Int8
    /// The advertising interval to ask for.
    public var interval: Duration
    /// Seconds to add to this device's clock to get the lobby's (the location beacon learns it
    /// from the lobby, so its periods start when the lobby's do).
    public var clockOffset: TimeInterval

    public init(uuid: BeaconUUID, secret: BeaconSecret, period: RotationPeriod, role: Role,
                measuredPower: Int8 = -59, interval: Duration = .milliseconds(100), clockOffset: TimeInterval = 0) {
        self.uuid = uuid
        self.secret = secret
        self.period = period
        self.role = role
        self.measuredPower = measuredPower
        self.interval = interval
        self.clockOffset = clockOffset
    }

    /// The major and minor advertised in period `index`.
    public func identity(period index: Int64) -> (major: Int, minor: Int) {
        switch role {
        case .player: RotatingIdentity.player(secret, period: index)
        case .location: RotatingIdentity.location(secret, period: index)
        }
    }

    /// The identity advertised in period `index`, as the pipeline names it.
    public func beaconIdentity(period index: Int64) -> BeaconIdentity {
        let (major, minor) = identity(period: index)
        return .iBeacon(uuid: uuid, major: UInt16(major), minor: UInt16(minor))
    }

    public func payload(period index: Int64) -> AdvertisingPayload {
        let (major, minor) = identity(period: index)
        let frame = IBeacon(uuid: uuid, major: UInt16(major), minor: UInt16(minor), measuredPower: measuredPower)
        return AdvertisingPayload(manufacturerData: [CompanyIdentifier.apple.rawValue: frame.manufacturerData], interval: interval)
    }

    /// The period the (offset) clock is in at `date`.
    public func index(at date: Date) -> Int64 { period.index(at: date.addingTimeInterval(clockOffset)) }

    /// The current period's payload at once, then the next period's at each boundary, until the
    /// consuming task is cancelled. `now` is the device's clock; `sleep` waits in it (tests
    /// pass a scenario clock's).
    public func payloads(
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) },
        onRotate: @escaping @Sendable (_ period: Int64) -> Void = { _ in }
    ) -> AsyncStream<AdvertisingPayload> {
        let beacon = self
        return AsyncStream { continuation in
            let task = Task {
                var index = beacon.index(at: now())
                while !Task.isCancelled {
                    onRotate(index)
                    continuation.yield(beacon.payload(period: index))
                    // Wake at the boundary, then again until the clock is past it (a sleep may
                    // end a little early).
                    while beacon.index(at: now()) <= index {
                        let left = beacon.period.end(of: index).timeIntervalSince(now().addingTimeInterval(beacon.clockOffset))
                        do { try await sleep(max(left, 0.001)) } catch { break }
                        if Task.isCancelled { break }
                    }
                    index = beacon.index(at: now())
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
