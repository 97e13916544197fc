/// Who won: a round goes to its single highest score; the game to whoever won most rounds, ties
/// broken by the total score. A tie that survives both rules has no winner.
public enum GameEvaluation {
    /// The single highest scorer of a round, nil on a tie at the top or an empty round.
    public static func roundWinner<Player: Hashable>(_ scores: [Player: Int]) -> Player? {
        guard let best = scores.values.max() else { return nil }
        let leaders = scores.filter { $0.value == best }
        return leaders.count == 1 ? leaders.first!.key : nil
    }

    /// The game's winner from its rounds' scores, nil on a draw.
    public static func winner<Player: Hashable>(rounds: [[Player: Int]]) -> Player? {
        var roundsWon: [Player: Int] = [:]
        var totals: [Player: Int] = [:]
        for round in rounds {
            for (player, score) in round {
                totals[player, default: 0] += score
                roundsWon[player, default: 0] += 0
            }
            if let winner = roundWinner(round) { roundsWon[winner, default: 0] += 1 }
        }
        guard let mostRounds = roundsWon.values.max() else { return nil }
        let contenders = roundsWon.filter { $0.value == mostRounds }.map(\.key)
        if contenders.count == 1 { return contenders[0] }
        let bestTotal = contenders.map { totals[$0, default: 0] }.max()!
        let leaders = contenders.filter { totals[$0, default: 0] == bestTotal }
        return leaders.count == 1 ? leaders[0] : nil
    }
}
