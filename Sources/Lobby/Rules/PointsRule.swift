/// How many board points a finished game earns each participant: 1 for taking part, 1 for each
/// round won, and 3 for winning the game (1 each on a draw). A 2–1 win in three rounds earns the
/// winner 1 + 2 + 3 = 6 and the loser 1 + 1 = 2; every finished game earns at least 1, so whoever
/// played in a window is on its board.
public enum PointsRule {
    public static let takingPart = 1
    public static let roundWon = 1
    public static let gameWon = 3
    public static let gameDrawn = 1

    public static func points(roundsWon: Int, outcome: GameOutcome) -> Int {
        let result = switch outcome {
        case .win: gameWon
        case .draw: gameDrawn
        case .loss: 0
        }
        return takingPart + roundWon * roundsWon + result
    }
}

/// One participant's result in a finished game.
public enum GameOutcome: String, Codable, Sendable {
    case win, loss, draw

    /// The outcome for `player` of a game won by `winner` (nil: a draw).
    public init<Player: Equatable>(player: Player, winner: Player?) {
        self = winner == nil ? .draw : winner == player ? .win : .loss
    }
}
