import BeaconFrames
import Foundation
import Logging
import Radio
import Traces

/// The radio an agent listens and advertises with, made from its configuration.
public struct AgentRadio: Sendable {
    public var scanner: any AdvertisementScanner
    /// Nil when the backend cannot advertise (a replayed trace).
    public var advertiser: (any Advertiser)?
    public var description: String

    public init(scanner: any AdvertisementScanner, advertiser: (any Advertiser)?, description: String) {
        self.scanner = scanner
        self.advertiser = advertiser
        self.description = description
    }

    /// The backend `settings` name: a live radio (BlueZ over the system bus, raw HCI, the
    /// simulated air) as ``RadioSelection`` makes it, or a replayed trace at its recorded pace
    /// (its skipped lines logged as warnings).
    public static func make(_ settings: AgentConfiguration.RadioSettings,
                            logger: Logger = Logger(label: "nearplay.agent")) throws(AgentError) -> AgentRadio {
        if let selection = settings.selection {
            // One radio for both (for BlueZ, one D-Bus connection and one copy of its objects).
            let radio = selection.makeRadio()
            return AgentRadio(scanner: radio.scanner, advertiser: radio.advertiser, description: radio.description)
        }
        // What remains is a replay.
        guard let file = settings.file else { throw AgentError("radio.file: the replay backend needs a trace.", code: "badConfiguration") }
        let records: [TraceRecord]
        do {
            let result = try TraceReader.read(path: file)
            for issue in result.issues { logger.warning("\(issue)") }
            records = result.records
        } catch {
            throw AgentError("radio.file: \(error)", code: "badConfiguration")
        }
        return AgentRadio(scanner: ReplayScanner(records.map(\.advertisement), pacing: .recorded(speed: 1)), advertiser: nil,
                          description: "replay of \(file)")
    }
}

extension PlayerIdentity {
    /// What this player broadcasts: an iBeacon frame of its identity, 100 ms apart.
    public var advertisingPayload: AdvertisingPayload? {
        guard case let .iBeacon(uuid, major, minor) = beacon else { return nil }
        let frame = IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59)
        return AdvertisingPayload(manufacturerData: [CompanyIdentifier.apple.rawValue: frame.manufacturerData])
    }
}

/// Who this agent runs as.
public struct PlayerIdentity: Codable, Sendable, Equatable {
    public var username: String
    public var beacon: BeaconFrames.BeaconIdentity

    public init(username: String, beacon: BeaconFrames.BeaconIdentity) {
        self.username = username
        self.beacon = beacon
    }

    enum CodingKeys: String, CodingKey { case username, beacon }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        username = try c.decode(String.self, forKey: .username)
        let text = try c.decode(String.self, forKey: .beacon)
        guard let beacon = BeaconFrames.BeaconIdentity(text) else {
            throw DecodingError.dataCorruptedError(forKey: .beacon, in: c, debugDescription: "not a beacon identity: \(text)")
        }
        self.beacon = beacon
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(username, forKey: .username)
        try c.encode(beacon.description, forKey: .beacon)
    }
}
