import Minigames

/// Why a player's history of verified scores was flagged.
public enum PlayerFlagReason: String, CaseIterable, Sendable, Codable {
    /// At the ceiling of every game it plays: no one is, for long.
    case ceiling
    /// Recordings without a real sensor's fingerprint (``Minigames/SensorFingerprint``).
    case noSensorFingerprint
}

/// Statistical checks across a player's verified scores: each recording alone was physically
/// plausible (``Minigames/ScoreVerifier``), but a history can still say "made up". Pure; the
/// store runs it at each score it records, over the scores since the player's flags were last
/// cleared, and holds a flagged player's tournament rewards until an operator clears it.
public struct ScoreScrutiny: Sendable {
    /// One verified score, oldest first in a history.
    public struct Entry: Sendable, Equatable {
        public var minigame: MinigameName
        public var score: Int
        /// Why the recording lacks a sensor's fingerprint, or nil when it has one.
        public var unfingerprinted: String?

        public init(minigame: MinigameName, score: Int, unfingerprinted: String? = nil) {
            self.minigame = minigame
            self.score = score
            self.unfingerprinted = unfingerprinted
        }
    }

    /// What a check found, in words an operator can act on.
    public struct Finding: Sendable, Equatable {
        public var reason: PlayerFlagReason
        public var details: String
    }

    /// The most recent scores looked at.
    public var window = 20
    /// A score at or above this is "at the ceiling" (Quickdraw: a reaction within 0.17 s; Shaker:
    /// 48 shakes in 10 s; Screamer: within about 1 dB of full scale).
    public var ceiling = 950
    /// Ceiling scores needed, all of the window's, and the minigames they must span, before a
    /// history is "at the ceiling of every game" rather than a good day at one.
    public var ceilingScores = 6
    public var ceilingMinigames = 3
    /// Recordings without a fingerprint needed in the window, and the share of it they must be,
    /// before the history is flagged: one odd recording (a file sensor, a test) is not.
    public var unfingerprintedRecordings = 3
    public var unfingerprintedShare = 0.5

    public init() {}

    /// What the history says, `history` oldest first (only the last ``window`` count).
    public func findings(_ history: [Entry]) -> [Finding] {
        let recent = Array(history.suffix(window))
        var findings: [Finding] = []
        let minigames = Set(recent.map(\.minigame))
        if recent.count >= ceilingScores, minigames.count >= ceilingMinigames, recent.allSatisfy({ $0.score >= ceiling }) {
            findings.append(Finding(reason: .ceiling, details: """
                all of the last \(recent.count) scores are \(ceiling) or more, in \(minigames.map(\.rawValue).sorted().joined(separator: ", ")) \
                (lowest \(recent.map(\.score).min() ?? 0))
                """))
        }
        let unfingerprinted = recent.compactMap(\.unfingerprinted)
        if unfingerprinted.count >= unfingerprintedRecordings,
           Double(unfingerprinted.count) >= unfingerprintedShare * Double(recent.count),
           let latest = unfingerprinted.last {
            findings.append(Finding(reason: .noSensorFingerprint, details: """
                \(unfingerprinted.count) of the last \(recent.count) recordings have no sensor's fingerprint; the latest: \(latest)
                """))
        }
        return findings
    }
}
