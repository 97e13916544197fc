/// The name of a minigame, as the command line, the lobby's API, its database and the agent all
/// spell it: lower case, e.g. `screamer`.
///
/// A raw-value struct with a constant for each game of ``MinigameCatalog`` (as `BeaconFrames.ADType`
/// is), not a closed enum: a name read from a request, a recording or an old row may be one no
/// game has, and is answered as such (``MinigameCatalog/game(named:)`` gives nil) rather than
/// failing to decode. Codable as its bare string (the standard library's coding of a `String`
/// raw value), so every JSON format stays as it was.
public struct MinigameName: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public static let screamer: Self = "screamer"
    public static let shaker: Self = "shaker"
    public static let statue: Self = "statue"
    public static let quickdraw: Self = "quickdraw"
}
