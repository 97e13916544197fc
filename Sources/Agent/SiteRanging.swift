import Logging
import Proximity
import Ranging
import Synchronization

/// The site whose calibration the agent ranges with: a location in range that published a site
/// profile (`nearplay beacon` publishes what `nearplay calibrate ranging` fitted there).
public struct RangingSite: Sendable, Equatable {
    public var location: Int64
    public var name: String
    /// The site's path-loss exponent: how fast RSSI falls with distance there.
    public var exponent: Double

    public init(location: Int64, name: String, exponent: Double) {
        self.location = location
        self.name = name
        self.exponent = exponent
    }

    /// Site exponents the agent trusts; the lobby refuses others, so one outside this comes from
    /// a lobby of another version and is not used (``NearbyLocations`` passes such a site over).
    public static let plausibleExponents = 1.0...6.0
}

/// The distance model the agent's pipeline follows: this device's own (its stored profile, or
/// the defaults) until it comes within range of a location with a site profile, then that site's
/// exponent while the site is in range. The receiver's offset is this device's own in both cases:
/// a site profile describes the room, not the radio that heard it.
public final class SiteRanging: Sendable {
    /// What the pipeline reads; see ``LiveProximity/distanceModel``.
    public let distanceModel: DistanceModelSwitch
    private let state: Mutex<(own: DistanceModel, site: RangingSite?)>
    private let logger: Logger

    public init(own: DistanceModel = .default, logger: Logger = Logger(label: "nearplay.ranging")) {
        distanceModel = DistanceModelSwitch(own)
        state = Mutex((own, nil))
        self.logger = logger
    }

    /// The site ranged with now, if any.
    public var site: RangingSite? { state.withLock { $0.site } }

    /// This device's own model, used away from calibrated sites. Returns the model in use.
    @discardableResult
    public func setOwn(_ model: DistanceModel) -> DistanceModel {
        state.withLock {
            $0.own = model
            let current = Self.model(own: $0.own, site: $0.site)
            distanceModel.set(current)  // under the lock, so the switch and the state agree
            return current
        }
    }

    /// The site in range (nil when none is). Returns the model in use.
    @discardableResult
    public func setSite(_ site: RangingSite?) -> DistanceModel {
        let site = site.flatMap { RangingSite.plausibleExponents.contains($0.exponent) ? $0 : nil }
        let (current, previous) = state.withLock {
            let previous = $0.site
            $0.site = site
            let current = Self.model(own: $0.own, site: site)
            distanceModel.set(current)
            return (current, previous)
        }
        if site != previous {
            if let site {
                logger.notice("ranging with the site profile of \(site.name) (exponent \(site.exponent)) while it is in range")
            } else if let previous {
                logger.notice("\(previous.name) is out of range: ranging with this device's own model again (\(current))")
            }
        }
        return current
    }

    private static func model(own: DistanceModel, site: RangingSite?) -> DistanceModel {
        site.map { .logDistance(exponent: $0.exponent) } ?? own
    }
}
