import Foundation

/// An iBeacon identity: the deployment's proximity UUID and a player's major/minor.
public struct PlayerBeacon: Codable, Sendable, Hashable {
    public var uuid: UUID
    public var major: Int
    public var minor: Int

    public init(uuid: UUID, major: Int, minor: Int) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }
}
