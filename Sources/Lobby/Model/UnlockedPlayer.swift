/// A player another player has unlocked.
public struct UnlockedPlayer: Codable, Sendable, Equatable, Hashable {
    public var username: String
    public var persistent: Bool

    public init(username: String, persistent: Bool) {
        self.username = username
        self.persistent = persistent
    }
}
