import Foundation

/// One beacon identity an agent saw, with its estimated distance in metres.
public struct EncounterSighting: Codable, Sendable {
    public var uuid: UUID
    public var major: Int
    public var minor: Int
    public var distance: Double?
    public var at: Date

    public init(uuid: UUID, major: Int, minor: Int, distance: Double?, at: Date) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.distance = distance
        self.at = at
    }
}

/// What became of a batch of sightings.
public struct EncounterReceipt: Codable, Sendable, Equatable {
    /// Sightings of known players, recorded.
    public var recorded: Int
    /// Sightings of identities that are no player of this deployment (or of the reporter itself).
    public var ignored: Int
}
