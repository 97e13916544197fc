/// Ludur's reward rule, as a pure function over who has unlocked whom.
///
/// Two-player game: the winner gains all of the loser's unlocked players (as non-persistent ones,
/// unless it already had them); the loser loses the non-persistent unlocked players both had before
/// the game; whatever the outcome (a draw too), each becomes a persistent unlocked player of the
/// other. Group game (three or more): the winner gains every other participant's unlocked players,
/// as persistent ones; nobody loses anything.
public enum RewardRule {
    /// For each owner, the unlocked players and whether each is persistent.
    public typealias Unlocks<Player: Hashable> = [Player: [Player: Bool]]

    /// The participants' unlocks after the game, from those before it. Owners not among the
    /// participants are left out of both.
    public static func apply<Player: Hashable>(
        participants: [Player], winner: Player?, before: Unlocks<Player>
    ) -> Unlocks<Player> {
        if participants.count > 2 { return winnerTakesUnlocks(participants: participants, winner: winner, before: before) }
        var after: Unlocks<Player> = [:]
        for participant in participants { after[participant] = before[participant] ?? [:] }
        if participants.count == 2 {
            let (first, second) = (participants[0], participants[1])
            if let winner, let loser = participants.first(where: { $0 != winner }) {
                let winnerBefore = before[winner] ?? [:]
                let loserBefore = before[loser] ?? [:]
                for (player, _) in loserBefore where player != winner && after[winner]?[player] == nil {
                    after[winner]?[player] = false
                }
                for (player, persistent) in loserBefore where !persistent && winnerBefore[player] != nil {
                    after[loser]?[player] = nil
                }
            }
            after[first]?[second] = true
            after[second]?[first] = true
        }
        return after
    }

    /// The group game's rule, which is also the rule of a multiplayer location's tournament
    /// however many took part: the winner gains every other participant's unlocked players, as
    /// persistent ones; nobody loses anything. No winner, no change.
    public static func winnerTakesUnlocks<Player: Hashable>(
        participants: [Player], winner: Player?, before: Unlocks<Player>
    ) -> Unlocks<Player> {
        var after: Unlocks<Player> = [:]
        for participant in participants { after[participant] = before[participant] ?? [:] }
        guard let winner, participants.contains(winner) else { return after }
        for other in participants where other != winner {
            for (player, _) in before[other] ?? [:] where player != winner {
                after[winner]?[player] = true
            }
        }
        return after
    }
}
