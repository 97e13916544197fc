/// Weekly leagues: five tiers, each split into groups of at most ``groupSize`` players. At the end
/// of a week the top fifth of each group (at least one player once the group has two) moves up a
/// tier and the bottom fifth moves down; ties share a rank (1, 2, 2, 4), and a tie on the edge
/// favours the players (all promoted, none demoted). A player who misses a whole week moves down
/// one tier more. New players start in the first tier.
public enum LeagueRule {
    public static let tierNames = ["Bronze", "Silver", "Gold", "Platinum", "Diamond"]
    public static let groupSize = 20

    /// How many of a group of `size` move up, and how many move down.
    public static func movers(groupSize size: Int) -> Int {
        size < 2 ? 0 : max(1, size / 5)
    }

    /// The tier after a week ended at `rank` (competition ranking) in a group of `size` in `tier`,
    /// followed by `weeksMissed` weeks without a result.
    public static func nextTier(tier: Int, rank: Int, groupSize size: Int, weeksMissed: Int) -> Int {
        let movers = movers(groupSize: size)
        var next = tier
        if rank <= movers { next += 1 } else if rank > size - movers { next -= 1 }
        if weeksMissed > 0 { next -= 1 }
        return min(max(next, 1), tierNames.count)
    }

    /// Whether `rank` in a group of `size` is in the promotion zone / the demotion zone.
    public static func zone(rank: Int, groupSize size: Int) -> (promoted: Bool, demoted: Bool) {
        let movers = movers(groupSize: size)
        let promoted = rank <= movers
        return (promoted, !promoted && rank > size - movers)
    }
}
