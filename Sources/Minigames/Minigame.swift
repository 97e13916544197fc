/// A game played with the sensors. A new game is one new file with a type conforming to this,
/// plus its line in ``MinigameCatalog/all``.
///
/// Scoring is pure: the same recording always gives the same score, which is what lets
/// ``ScoreVerifier`` recompute a claimed score.
public protocol Minigame: Sendable {
    /// The name used on the command line and in the lobby, e.g. ``MinigameName/screamer``.
    var name: MinigameName { get }
    /// What the player is told before the countdown.
    var instructions: String { get }
    /// Seconds a round lasts.
    var duration: Double { get }
    /// The sensors the round records.
    var sensors: Set<SensorKind> { get }
    /// How a round goes; games with a random signal draw it from `generator`.
    func plan(using generator: inout any RandomNumberGenerator) -> RoundPlan
    /// The score of a recorded round, 0...1000.
    func score(_ recording: RoundRecording) -> GameScore
}

/// What the terminal (or the agent) must do during a round.
public struct RoundPlan: Equatable, Sendable {
    public var duration: Double
    /// Seconds from the start of the round to show the signal, if the game has one.
    public var signalTime: Double?

    public init(duration: Double, signalTime: Double? = nil) {
        self.duration = duration
        self.signalTime = signalTime
    }
}

extension Minigame {
    public func plan(using generator: inout any RandomNumberGenerator) -> RoundPlan {
        RoundPlan(duration: duration)
    }
}
